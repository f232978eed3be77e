// FakeAgentCalls: a drill's agents without sockets (harness/controller/
// agent_calls.h). Every call is recorded as a batch — one CallEachNamed,
// or one Call — in the order it came; each request is answered by `answer`
// (by default {"ok": true, "verified": true}), after `before_answer` has
// seen the whole batch (a test checks there what was journalled before the
// call went out, or fails the drill from "another thread" mid-call).
// Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/controller/agent_calls.h"

namespace fdrill {

class FakeAgentCalls final : public AgentCalls {
 public:
  struct Request {
    std::string name;
    Json body;
  };
  struct Batch {
    std::string type;
    std::vector<Request> requests;
  };
  using AnswerFn = std::function<Result<Json>(const std::string& name, const std::string& type,
                                              const Json& body)>;

  explicit FakeAgentCalls(std::vector<std::string> names) {
    for (const std::string& n : names) facts_.push_back({n, 0, "/tmp/" + n, n});
  }

  AnswerFn answer = [](const std::string&, const std::string&, const Json&) -> Result<Json> {
    return Json{{"ok", true}, {"verified", true}};
  };
  std::function<void(const Batch&)> before_answer;

  std::vector<std::string> Names() const override {
    std::vector<std::string> out;
    for (const AgentFacts& f : facts_) out.push_back(f.name);
    return out;
  }
  const AgentFacts& Facts(const std::string& name) const override {
    for (const AgentFacts& f : facts_) {
      if (f.name == name) return f;
    }
    throw std::out_of_range("FakeAgentCalls: no agent " + name);
  }
  Result<Json> Call(const std::string& name, const std::string& type, const Json& body,
                    Duration timeout) override {
    return CallEachNamed({name}, type, {body}, timeout).front();
  }
  std::vector<Result<Json>> CallEachNamed(const std::vector<std::string>& names,
                                          const std::string& type, const std::vector<Json>& bodies,
                                          Duration) override {
    Batch batch{type, {}};
    for (size_t i = 0; i < names.size(); ++i) batch.requests.push_back({names[i], bodies[i]});
    {
      std::lock_guard<std::mutex> lock(mu_);
      batches_.push_back(batch);
    }
    if (before_answer) before_answer(batch);
    std::vector<Result<Json>> out;
    for (const Request& r : batch.requests) {
      Facts(r.name);  // a name the drill never connected is the caller's bug
      out.push_back(answer(r.name, type, r.body));
    }
    return out;
  }

  // The batches of TYPE so far, in order.
  std::vector<Batch> BatchesOf(const std::string& type) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Batch> out;
    for (const Batch& b : batches_) {
      if (b.type == type) out.push_back(b);
    }
    return out;
  }

 private:
  std::vector<AgentFacts> facts_;
  mutable std::mutex mu_;
  std::vector<Batch> batches_;
};

}  // namespace fdrill

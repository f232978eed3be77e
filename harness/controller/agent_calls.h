// AgentCalls: what the timeline walker and the workload supervisors ask of a
// drill's agents — calls by agent name, and what each agent said of itself
// when it connected. DrillAgents implements it over its TLS links;
// tests/fakes/fake_agent_calls.h records every call and answers as a test
// says, so the walker and the supervisors are tested without a fabric.
//
// Contract: a name is one of Names() (the nodes, then the switches a fault
// names); Facts of any other name is a programming error. Calls may come
// from any thread; CallEachNamed sends every request before it waits for
// any answer, and answers in the order of `names`.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/core/units.h"

namespace fdrill {

// How long one call to one agent may take, unless a call says otherwise.
inline constexpr auto kCallTimeout = std::chrono::seconds(10);

// What an agent said of itself at hello.
struct AgentFacts {
  std::string name;       // the node's name in the drill (n0, gpu01), or a switch's
  int64_t offset_ns = 0;  // agent wall clock minus controller wall clock
  std::string tmpdir;
  // The agent's gethostname(), which the node's ranks also see: a real
  // cluster's run directory is per host (WorkloadSupervisor::RunDir).
  std::string hostname;
};

class AgentCalls {
 public:
  virtual ~AgentCalls() = default;
  virtual std::vector<std::string> Names() const = 0;
  virtual const AgentFacts& Facts(const std::string& name) const = 0;
  // One request of `type` to agent `name`; its reply, or why there was none
  // by `timeout` (DeadlineExceeded) or the agent refused it.
  virtual Result<Json> Call(const std::string& name, const std::string& type, const Json& body,
                            Duration timeout) = 0;
  // bodies[i] to names[i], all at once; one result per name, in order.
  virtual std::vector<Result<Json>> CallEachNamed(const std::vector<std::string>& names,
                                                  const std::string& type,
                                                  const std::vector<Json>& bodies,
                                                  Duration timeout) = 0;
};

}  // namespace fdrill

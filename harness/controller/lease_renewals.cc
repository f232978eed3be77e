#include "harness/controller/lease_renewals.h"

#include <algorithm>

namespace fdrill {

LeaseRenewals::LeaseRenewals(size_t agents, Clock::TimePoint now) : agents_(agents) {
  Restart(now);
}

void LeaseRenewals::Restart(Clock::TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Agent& a : agents_) a.last_ok = now;
}

LeaseRenewals::Turn LeaseRenewals::TakeTurn(size_t i, const std::string& period) {
  std::lock_guard<std::mutex> lock(mu_);
  Agent& a = agents_[i];
  const Sent2& before_last = a.sent[1];
  if (before_last.renewal != 0 && a.answered < before_last.renewal) {
    a.answered = before_last.renewal;
    a.error = "no answer within two renewals (" + period + " each)";
  }
  return Turn{.failed = a.error, .last_ok = a.last_ok, .forget = before_last.call_id};
}

uint64_t LeaseRenewals::Sent(size_t i, Clock::TimePoint at) {
  std::lock_guard<std::mutex> lock(mu_);
  Agent& a = agents_[i];
  a.sent[1] = a.sent[0];
  a.sent[0] = Sent2{.renewal = a.sent[1].renewal + 1, .at = at};
  return a.sent[0].renewal;
}

void LeaseRenewals::CallId(size_t i, uint64_t renewal, uint64_t call_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Sent2& s : agents_[i].sent) {
    if (s.renewal == renewal) s.call_id = call_id;
  }
}

void LeaseRenewals::Answer(Agent& a, uint64_t renewal) {
  a.answered = std::max(a.answered, renewal);
}

void LeaseRenewals::Replied(size_t i, uint64_t renewal, const Result<Json>& reply,
                            Clock::TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  Agent& a = agents_[i];
  if (renewal <= a.answered) return;  // given up on already, or a later one answered
  Answer(a, renewal);
  if (reply.ok()) {
    a.last_ok = now;
    a.error.clear();
  } else {
    a.error = reply.status().message();
  }
}

void LeaseRenewals::Acked(size_t i, uint64_t renewal) {
  std::lock_guard<std::mutex> lock(mu_);
  Agent& a = agents_[i];
  if (renewal <= a.answered) return;
  // Only the last two can be unanswered (TakeTurn gives up on the one
  // before last); a number never sent is not this controller's.
  const Sent2* s = nullptr;
  for (const Sent2& x : a.sent) {
    if (x.renewal == renewal) s = &x;
  }
  if (s == nullptr) return;
  Answer(a, renewal);
  a.last_ok = std::max(a.last_ok, s->at);
  a.error.clear();
}

}  // namespace fdrill

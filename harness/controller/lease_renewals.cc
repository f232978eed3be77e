#include "harness/controller/lease_renewals.h"

#include <algorithm>

#include "common/wire/protocol.h"

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
  const uint64_t before_last = a.sent >= 2 ? a.sent - 1 : 0;
  if (before_last != 0 && a.answered < before_last) {
    a.answered = before_last;
    a.error = "no answer within two renewals (" + period + " each)";
  }
  return Turn{.failed = a.error, .last_ok = a.last_ok, .forget = a.call_id[1]};
}

uint64_t LeaseRenewals::Sent(size_t i, Clock::TimePoint at) {
  std::lock_guard<std::mutex> lock(mu_);
  Agent& a = agents_[i];
  ++a.sent;
  a.sent_at[a.sent % kRemembered] = at;
  a.call_id[1] = a.call_id[0];
  a.call_id[0] = 0;
  return a.sent;
}

void LeaseRenewals::CallId(size_t i, uint64_t renewal, uint64_t call_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Agent& a = agents_[i];
  if (renewal == a.sent) a.call_id[0] = call_id;
  if (renewal + 1 == a.sent) a.call_id[1] = call_id;
}

std::optional<Clock::TimePoint> LeaseRenewals::Held(Agent& a, uint64_t renewal) {
  // A number never sent is not this controller's (another's, or a
  // restarted agent's); one too old has no send time kept.
  if (renewal == 0 || renewal > a.sent || renewal + kRemembered <= a.sent) return std::nullopt;
  // The error stands while an answer to a later renewal (a refusal, one
  // given up on) is newer than this one.
  if (renewal >= a.answered) a.error.clear();
  a.answered = std::max(a.answered, renewal);
  const Clock::TimePoint sent_at = a.sent_at[renewal % kRemembered];
  a.last_ok = std::max(a.last_ok, sent_at);
  return sent_at;
}

void LeaseRenewals::Replied(size_t i, uint64_t renewal, const Result<Json>& reply) {
  std::lock_guard<std::mutex> lock(mu_);
  Agent& a = agents_[i];
  if (reply.ok()) {
    Held(a, renewal);
  } else if (renewal > a.answered) {  // a refusal (or the link's loss) of one still open
    a.answered = renewal;
    a.error = reply.status().message();
  }
}

std::optional<Clock::TimePoint> LeaseRenewals::Acked(size_t i, uint64_t renewal) {
  std::lock_guard<std::mutex> lock(mu_);
  return Held(agents_[i], renewal);
}

std::optional<uint64_t> LeaseRenewals::AckIn(const Json& push, const std::string& drill) {
  auto ack = push.find(proto::key::kLeaseAck);
  if (ack == push.end() || !ack->is_number_unsigned() ||
      push.value(proto::key::kDrill, std::string()) != drill)
    return std::nullopt;
  return ack->get<uint64_t>();
}

}  // namespace fdrill

// LeaseRenewals: per agent, the lease renewals a drill's lease thread sent
// (DrillAgents::LeaseLoop) and what answered them — no sockets, so the rules
// are tested on their own.
//
// A renewal is answered one of two ways:
//  - a reply: an agent older than acknowledgement by push, and any refusal
//    (Replied);
//  - an acknowledgement in a push (Acked): the renewal asked for
//    proto::key::kAck "push", and the agent took it, then put its number in
//    its next counters push or, when none went within ack_within_ms, in a
//    lease_ack push of its own. A later number covers the earlier ones.
// An acknowledgement comes up to ack_within (the renew period) after the
// renewal arrived, so a renewal fails when it is still unanswered two turns
// after it was sent (Turn): the one before last. The lease's last good time
// (`last_ok`) is when the latest renewal answered good was sent — the agent
// took it later, so its lease runs at least ttl from then. An answer that
// comes after its renewal was given up on still counts for that: on a
// loaded machine acknowledgements ran 2 s late at the p99 (fanout_bench at
// 10,000 agents), and a controller that ignored them saw every lease go
// stale while every agent held it. The last kRemembered renewals' send
// times are kept; an answer to an older one is ignored.
//
// Thread-safe: the lease thread calls Sent and Turn, the io thread Replied
// and Acked.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/core/clock.h"
#include "common/core/json.h"
#include "common/core/result.h"

namespace fdrill {

class LeaseRenewals {
 public:
  LeaseRenewals(size_t agents, Clock::TimePoint now);

  // Every agent's lease counts as good from `now` (the lease thread starts).
  void Restart(Clock::TimePoint now);

  // Agent i's turn, before its next renewal: whether a renewal has failed
  // (`failed`: why, "" when none has), the lease's last good time, and the
  // AgentLink call to forget — the renewal before last, answered or given
  // up on now (an agent that acknowledges by push never replies to it).
  struct Turn {
    std::string failed;
    Clock::TimePoint last_ok;
    uint64_t forget = 0;  // 0: none
    // A renewal failed and the lease may lapse before the next one goes:
    // the agent will revert by itself, and the drill ends.
    bool Lost(Clock::TimePoint now, Duration renew, Duration ttl) const {
      return !failed.empty() && now + renew >= last_ok + ttl;
    }
  };
  Turn TakeTurn(size_t i, const std::string& period);

  // Renewals per agent whose send time is kept, for answers that come late.
  static constexpr size_t kRemembered = 8;

  // Renewal sent to agent i at `at`; returns its number (1, 2, ...), which
  // the request carries (proto::key::kRenewal).
  uint64_t Sent(size_t i, Clock::TimePoint at);
  // The AgentLink call id of agent i's renewal `renewal`.
  void CallId(size_t i, uint64_t renewal, uint64_t call_id);

  // The reply to agent i's renewal `renewal`.
  void Replied(size_t i, uint64_t renewal, const Result<Json>& reply);
  // Agent i acknowledged renewal `renewal` (and every earlier one) in a
  // push. Returns when that renewal was sent; nullopt when it is not one
  // of the last kRemembered sent.
  std::optional<Clock::TimePoint> Acked(size_t i, uint64_t renewal);

  // The renewal a push acknowledges for drill `drill` (its `lease_ack`,
  // when its `drill` is that one: pushes go to every session an agent
  // has); nullopt for any other push.
  static std::optional<uint64_t> AckIn(const Json& push, const std::string& drill);

 private:
  struct Agent {
    uint64_t sent = 0;                      // renewals sent: the last one's number
    uint64_t answered = 0;                  // the highest renewal answered or given up on
    Clock::TimePoint sent_at[kRemembered];  // renewal k's at [k % kRemembered]
    uint64_t call_id[2] = {0, 0};           // the last renewal's, the one before's
    Clock::TimePoint last_ok;
    std::string error;  // of the last answer; "" when it held
  };
  // Renewal k held: the lease is good from when it was sent, which is
  // returned. nullopt when k is not one of the last kRemembered sent.
  std::optional<Clock::TimePoint> Held(Agent& a, uint64_t renewal);

  std::mutex mu_;
  std::vector<Agent> agents_;
};

}  // namespace fdrill

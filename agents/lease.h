// Lease: which controller owns this agent now, and the limits its drill
// declared. One owner at a time — the certificate subject plus the drill id
// (two operators sharing a controller certificate are still two drills).
// Every fault-changing request must come from the owner while the lease is
// live; anyone else is told who holds the node and until when. Expiry is
// the agent's (AgentService::Tick reverts everything); panic breaks it.
//
// The limits are the drill's blast radius as the controller computed it
// from the scenario for this node (docs/reference/protocol.md "lease"): the kinds and
// targets it may fault, how many faults at once, and the longest a fault
// may stay. The agent refuses an apply outside them, whatever the
// controller's own checks said. A limit the lease does not carry is no
// limit; an empty list is "none" (a node the drill puts no fault on).
// Single-threaded (the agent's).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "common/core/clock.h"
#include "common/core/json.h"
#include "common/core/result.h"
#include "common/core/units.h"

namespace fdrill {

struct LeaseLimits {
  std::optional<std::set<std::string>> kinds;    // nullopt: any
  std::optional<std::set<std::string>> targets;  // Fault::Target() values; nullopt: any
  std::optional<int> max_faults;                 // at once; nullopt: any
  int64_t max_duration_ms = 0;                   // per fault; 0: any

  // From the lease request's "limits" (absent: none); InvalidArgument
  // naming the field otherwise.
  static Result<LeaseLimits> FromJson(const Json& j);
  Json ToJson() const;
  // Ok when a fault of `kind` on `target` may be applied with `active`
  // faults already in force; PermissionDenied naming the limit otherwise.
  Status Admit(const std::string& kind, const std::string& target, size_t active) const;
};

class Lease {
 public:
  // Takes the lease for (owner, drill) or renews it: Ok when it was free,
  // lapsed, or already theirs; PermissionDenied "held by OWNER for drill
  // DRILL until TIME (N ms from now)" otherwise. A renewal may not change
  // the limits (InvalidArgument): they are fixed for the drill.
  Status Take(const std::string& owner, const std::string& drill, Duration ttl,
              const LeaseLimits& limits, Clock::TimePoint now, int64_t wall_now_ns);
  // The owner gives it up (ttl 0). Another caller's release is refused; a
  // free lease releases trivially.
  Status Release(const std::string& owner, const std::string& drill);
  // Ok when (owner, drill) holds the live lease; PermissionDenied naming who
  // does, or that none is held (a fault needs a lease: `type` is named).
  Status Check(const std::string& owner, const std::string& drill, const std::string& type,
               Clock::TimePoint now, int64_t wall_now_ns) const;
  // Ok unless someone else holds the live lease: what undoes (revert,
  // revert_all, workload_stop, run_dir_remove) may run on a free node, never
  // under another drill.
  Status CheckNotOthers(const std::string& owner, const std::string& drill, const std::string& type,
                        Clock::TimePoint now, int64_t wall_now_ns) const;
  // Drops it (expiry, panic).
  void Break() { held_ = false; }

  bool held() const { return held_; }
  bool Lapsed(Clock::TimePoint now) const { return held_ && now > deadline_; }
  // When it lapses unless renewed (meaningful while held()).
  Clock::TimePoint deadline() const { return deadline_; }
  const LeaseLimits& limits() const { return limits_; }
  const std::string& owner() const { return owner_; }
  const std::string& drill() const { return drill_; }

 private:
  std::string Holder(Clock::TimePoint now, int64_t wall_now_ns) const;

  bool held_ = false;
  std::string owner_;
  std::string drill_;
  Clock::TimePoint deadline_{};
  LeaseLimits limits_;
};

}  // namespace fdrill

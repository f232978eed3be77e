// PanicLatch: `fdrill panic` is sticky. Once latched, the agent refuses
// every request that could put a fault on the node (lease, apply,
// workload_start) until a controller clears it (`fdrill panic --clear`),
// so nothing re-applies right after the emergency stop. The latch is a file
// in the state directory (<state_dir>/panic.json: who latched it, when, why),
// written atomically before the latch answers, so it survives an agent
// restart or a reboot. The agent reverts before it writes the file (a full
// disk must not stand between `fdrill panic` and the revert). Reverting, stopping and reading stay
// allowed. Single-threaded (the agent's).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/core/json.h"
#include "common/core/result.h"

namespace fdrill {

class PanicLatch {
 public:
  // Reads an existing latch; an unreadable or damaged file counts as
  // latched (fail closed) with the reason saying so.
  explicit PanicLatch(std::string path);

  // Latched in memory at once: Refusal from now on.
  void Latch(const std::string& by, const std::string& reason, int64_t wall_ns);
  // Writes the latch to the state directory. One that cannot be written (a
  // full or read-only disk) stays latched in memory until Clear() or the
  // agent's restart; the Status says why, and State() carries it as "unsaved".
  Status Save();
  Status Clear();
  bool latched() const { return state_.has_value(); }
  // {by, reason, at_ns}, or null when clear (hello and metrics show it).
  Json State() const { return state_ ? *state_ : Json(nullptr); }
  // PermissionDenied for a request of `type` while latched.
  Status Refusal(const std::string& type) const;

 private:
  std::string path_;
  std::optional<Json> state_;
};

}  // namespace fdrill

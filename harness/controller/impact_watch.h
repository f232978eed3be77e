// ImpactWatch: the faults applied whose impact the live view has not shown
// yet, and when it shows (the `impact_seen` event; docs/performance.md,
// detection latency). Pure: the caller passes the live monitors and the
// time, and says when to look — on every batch of records that arrives and
// at NextLook(), so an impact is seen as soon as a record shows it, or as
// soon as the silence that shows it has lasted long enough, not at the
// timeline's next 20 ms turn. Not thread-safe: the caller holds
// DrillState::mu, which guards the monitors.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/core/units.h"
#include "harness/controller/live_monitor.h"

namespace fdrill {

class ImpactWatch {
 public:
  using Monitors = std::vector<std::unique_ptr<LiveMonitor>>;

  // Fault `id` was due at `at` (timeline time): its impact is awaited.
  void Applied(const std::string& id, Duration at) { awaiting_[id] = at; }

  // The awaited faults whose impact shows at `now` in any workload's live
  // view — a complete iteration below the band that ended after the apply,
  // or one running below it (LiveMonitor::SlowInProgress) — each with the
  // time from its apply; they are awaited no more.
  std::vector<std::pair<std::string, Duration>> Look(const Monitors& monitors, Duration now);

  // The first moment Look would find an impact if no record arrived
  // before it; nullopt when nothing is awaited or no view has a band yet.
  std::optional<Duration> NextLook(const Monitors& monitors) const;

  bool empty() const { return awaiting_.empty(); }

 private:
  std::map<std::string, Duration> awaiting_;  // id -> when it was applied
};

}  // namespace fdrill

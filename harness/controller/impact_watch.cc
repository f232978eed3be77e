#include "harness/controller/impact_watch.h"

#include <algorithm>

namespace fdrill {

std::vector<std::pair<std::string, Duration>> ImpactWatch::Look(const Monitors& monitors,
                                                                Duration now) {
  std::vector<std::pair<std::string, Duration>> seen;
  for (auto it = awaiting_.begin(); it != awaiting_.end();) {
    const Duration applied = it->second;
    const bool shows = std::any_of(monitors.begin(), monitors.end(), [&](const auto& m) {
      const std::optional<Duration> below = m->last_below_band_end();
      return (below && *below > applied) || m->SlowInProgress(now, applied);
    });
    if (shows) {
      seen.emplace_back(it->first, now - applied);
      it = awaiting_.erase(it);
    } else {
      ++it;
    }
  }
  return seen;
}

std::optional<Duration> ImpactWatch::NextLook(const Monitors& monitors) const {
  std::optional<Duration> next;
  for (const auto& [id, applied] : awaiting_) {
    for (const auto& m : monitors) {
      const std::optional<Duration> at = m->SlowAt(applied);
      if (!at) continue;
      const Duration first = *at + Duration(1);  // SlowInProgress holds after SlowAt
      next = next ? std::min(*next, first) : first;
    }
  }
  return next;
}

}  // namespace fdrill

// Failures and restarts of the workload (issue #8): what each cost.
#include <limits>

#include "reports/analysis.h"

namespace fdrill {

std::vector<RestartStats> AnalyzeFailures(const std::vector<Event>& events,
                                          const std::vector<Iteration>& series,
                                          const Baseline& baseline, int window_iters) {
  std::vector<RestartStats> out;
  const Event* last_apply = nullptr;  // the latest fault_applied before the current event
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (e.type == "fault_applied") last_apply = &e;
    if (e.type != "workload_failed") continue;
    RestartStats r;
    r.failed_at_s = e.t;
    r.cause = e.cause.empty() ? "exit" : e.cause;
    r.reason = e.reason;
    if (last_apply != nullptr) {
      r.fault = last_apply->id;
      r.time_to_detect_s = e.t - last_apply->t;
    }
    // The relaunch this failure led to: the next workload_restart, unless
    // another failure comes first (the relaunch itself failed to start).
    for (size_t j = i + 1; j < events.size(); ++j) {
      if (events[j].type == "workload_failed") break;
      if (events[j].type != "workload_restart") continue;
      const Event& restart = events[j];
      r.time_to_restart_s = restart.t - e.t;
      r.resumed_step = restart.resumed_step;
      r.iterations_lost = restart.iterations_lost;
      if (baseline.band_low) {
        // Bounded by the next failure, if any.
        double bound = std::numeric_limits<double>::infinity();
        for (size_t k = j + 1; k < events.size(); ++k) {
          if (events[k].type == "workload_failed") {
            bound = events[k].t;
            break;
          }
        }
        r.back_in_band_s =
            TimeToRecover(series, restart.t, *baseline.band_low, window_iters, bound);
      }
      break;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace fdrill

// Anomalies: slowdowns no scheduled fault explains. Definition in
// reports/README.md; the localisation is reports/localise.h's.
#include <algorithm>
#include <cmath>
#include <limits>

#include "reports/analysis.h"
#include "reports/localise.h"

namespace fdrill {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// What a scheduled fault explains: from its apply to its recovery plus a
// second (to the next fault's apply when it never recovered).
std::vector<std::pair<double, double>> Explained(const std::vector<Event>& events,
                                                 const std::vector<FaultStats>& faults) {
  std::vector<std::pair<double, double>> out;
  for (size_t i = 0; i < faults.size(); ++i) {
    const FaultStats& f = faults[i];
    double end = kInf;
    if (f.reverted_at_s && f.time_to_recover_s) end = *f.reverted_at_s + *f.time_to_recover_s + 1;
    for (const FaultStats& g : faults) {
      if (g.applied_at_s > f.applied_at_s && !f.time_to_recover_s)
        end = std::min(end, g.applied_at_s);
    }
    out.push_back({f.applied_at_s - 0.5, end});
  }
  // A failed job and its relaunch: until the restart has run for a while.
  double failed_at = kInf;
  for (const Event& e : events) {
    if (e.type == "workload_failed") failed_at = std::min(failed_at, e.t);
    if (e.type == "workload_restart" && std::isfinite(failed_at)) {
      out.push_back({failed_at, e.t + kAnomalyRestartGraceS});
      failed_at = kInf;
    }
  }
  if (std::isfinite(failed_at)) out.push_back({failed_at, kInf});
  return out;
}

}  // namespace

std::vector<Anomaly> FindAnomalies(const std::vector<Event>& events,
                                   const std::vector<Iteration>& series, const Baseline& baseline,
                                   const std::vector<FaultStats>& faults,
                                   const std::vector<InventorySwitch>& switches) {
  std::vector<Anomaly> out;
  if (!baseline.band_low || baseline.count == 0) return out;
  const auto explained = Explained(events, faults);
  auto is_explained = [&](const Iteration& it) {
    return std::any_of(explained.begin(), explained.end(), [&](const auto& span) {
      return it.end_s > span.first && it.start_s < span.second;
    });
  };
  const CounterIndex counters(events);
  auto close = [&](size_t first, size_t last) {
    const int n = static_cast<int>(last - first + 1);
    const double start = series[first].start_s, end = series[last].end_s;
    if (n < kAnomalyMinIterations || end - start < kAnomalyMinSeconds) return;
    auto culprit = Localise(
        counters, series,
        {.from_s = start, .to_s = end, .ref_from_s = baseline.start_s, .ref_to_s = baseline.end_s},
        switches);
    if (!culprit) return;  // a dip nothing can be named for is noise, not an anomaly
    std::vector<const Iteration*> in;
    for (size_t i = first; i <= last; ++i) in.push_back(&series[i]);
    Anomaly a{.start_s = start, .end_s = end, .iterations = n, .culprit = std::move(*culprit)};
    const std::optional<double> base =
        baseline.busbw_mean ? baseline.busbw_mean : baseline.busbw_median;
    if (auto rate = TimeWeightedBusbw(in, start, end); base && rate) a.slowdown = *base / *rate;
    out.push_back(std::move(a));
  };
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t open = kNone;  // the first iteration of the run being walked
  for (size_t i = 0; i < series.size(); ++i) {
    const Iteration& it = series[i];
    const bool low = it.start_s >= baseline.end_s && it.busbw_gbps < *baseline.band_low &&
                     !is_explained(it) && (open == kNone || series[open].attempt == it.attempt);
    if (low && open == kNone) open = i;
    if (!low && open != kNone) {
      close(open, i - 1);
      open = kNone;
    }
  }
  if (open != kNone) close(open, series.size() - 1);
  return out;
}

}  // namespace fdrill

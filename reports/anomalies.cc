// Anomalies: slowdowns no scheduled fault explains. Definition in
// reports/README.md; the localisation is reports/localise.h's.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <vector>

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

// How long before an anomaly inside a learned baseline its counters are
// compared with.
constexpr double kRollReferenceS = 10.0;

// The band inside a learned baseline, from the healthy iterations just
// before: the median of the last kWindow of them, times the whole
// baseline's band / median ratio (the same width, relative to where the job
// runs now), so a burn-in whose rate drifts over hours is judged against
// its recent self. Until kMinSeen were seen, the whole baseline's band.
// The median is taken again every kEvery additions (10 M records read in a
// few seconds: reports/README.md).
class RollingBand {
 public:
  explicit RollingBand(const Baseline& b)
      : ratio_(b.busbw_median && *b.busbw_median > 0 ? *b.band_low / *b.busbw_median : 0),
        band_(*b.band_low) {}
  double Band() const { return band_; }
  void Add(double busbw) {
    window_.push_back(busbw);
    if (window_.size() > kWindow) window_.pop_front();
    if (++added_ % kEvery != 0 || window_.size() < kMinSeen || ratio_ <= 0) return;
    std::vector<double> v(window_.begin(), window_.end());
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    band_ = v[v.size() / 2] * ratio_;
  }

 private:
  static constexpr size_t kWindow = 500, kMinSeen = 50, kEvery = 25;
  double ratio_;
  double band_;
  std::deque<double> window_;
  size_t added_ = 0;
};

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
    // The reference for its counters: the baseline's span; inside a learned
    // baseline, the time just before it (or, at the very start, after it).
    double ref_from = baseline.start_s, ref_to = baseline.end_s;
    if (baseline.learned && start < baseline.end_s) {
      ref_from = std::max(baseline.start_s, start - kRollReferenceS);
      ref_to = start;
      if (ref_to - ref_from < kAnomalyMinSeconds) {
        ref_from = end;
        ref_to = std::min(baseline.end_s, end + kRollReferenceS);
      }
    }
    auto culprit = Localise(
        counters, series,
        {.from_s = start, .to_s = end, .ref_from_s = ref_from, .ref_to_s = ref_to}, switches);
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
  RollingBand rolling(baseline);
  for (size_t i = 0; i < series.size(); ++i) {
    const Iteration& it = series[i];
    // After the baseline: its band. Inside a learned one: the rolling band.
    const bool after = it.start_s >= baseline.end_s;
    const bool inside = baseline.learned && !after && it.start_s >= baseline.start_s;
    const double band = inside ? rolling.Band() : *baseline.band_low;
    const bool low = (after || inside) && it.busbw_gbps < band && !is_explained(it) &&
                     (open == kNone || series[open].attempt == it.attempt);
    if (inside && !low && !is_explained(it)) rolling.Add(it.busbw_gbps);
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

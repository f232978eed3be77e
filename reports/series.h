// The iteration series: metrics.jsonl's per-rank records folded into one
// entry per collective iteration. A collective is as slow as its slowest rank,
// so an iteration's time is the largest time_ms over its ranks, its end is the
// latest `t` over its ranks, and it started time_ms before that end. Its busbw
// is recomputed from that time (nccl-tests' definitions):
//   busbw = bytes × bus_factor / time,
// with bus_factor = busbw_gbps / algbw_gbps as the records state it, or, when
// they do not, the op's factor (all_reduce 2(n-1)/n; all_gather,
// reduce_scatter, alltoall (n-1)/n; others 1). Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reports/metric_table.h"

namespace fdrill {

struct RankSample {
  int rank = 0;
  // A view of a name that outlives the Iteration: the MetricTable's
  // (metric_table.h) for BuildIterations', the live localiser's own for its.
  // Never a temporary: a day-long run has tens of millions of samples, and a
  // string each was a sixth of the report's memory.
  std::string_view node;
  double time_ms = 0;
  double wait_ms = 0;
};

struct Iteration {
  int64_t iter = 0;
  int attempt = 0;                // the workload launch (MetricRecord::attempt)
  double start_s = 0;             // end_s - time_ms / 1000
  double end_s = 0;               // latest t over the ranks
  double time_ms = 0;             // slowest rank's time
  double busbw_gbps = 0;          // bytes × bus_factor / time_ms
  std::vector<RankSample> ranks;  // by rank
};

// Iterations in `iter` order, of every record or of the records `rows` (in
// file order). A record's iteration is its (attempt, iter).
std::vector<Iteration> BuildIterations(const MetricTable& metrics);
std::vector<Iteration> BuildIterations(const MetricTable& metrics, std::span<const uint32_t> rows);

// nccl-tests' bus factor of `op` on n ranks.
double OpBusFactor(std::string_view op, int nranks);

// Iterations whose end lies in [lo, hi) — or [lo, hi] when include_hi.
std::vector<const Iteration*> EndingIn(const std::vector<Iteration>& series, double lo, double hi,
                                       bool include_hi);

// Iterations that overlap the open interval (lo, hi): start < hi and end > lo.
std::vector<const Iteration*> Overlapping(const std::vector<Iteration>& series, double lo,
                                          double hi);

// The job's rate over [lo, hi): the busbw of every iteration overlapping
// it, weighted by how much of it each covers — work done over time, so a
// stall (one long, slow iteration) counts for its whole length, where a
// median over iterations would barely move. nullopt when none overlaps.
// Every slowdown the report gives (phases, faults, tenants, anomalies) is
// a baseline's time-weighted mean over this.
std::optional<double> TimeWeightedBusbw(const std::vector<const Iteration*>& overlapping, double lo,
                                        double hi);

std::vector<double> BusbwOf(const std::vector<const Iteration*>& iterations);
std::vector<double> TimeMsOf(const std::vector<const Iteration*>& iterations);

}  // namespace fdrill

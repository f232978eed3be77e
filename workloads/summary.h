// The closing table rank 0 prints to stdout, shaped like nccl-tests' so
// people and scripts that read those read this; one row per size:
//   # all_reduce on 4 ranks; time: mean of the timed iterations, p50 and p99 their percentiles
//   #       size         count      type   redop   root       time        p50        p99   algbw
//   busbw  #wrong #        (B)    (elements)                                (us)       (us) (us)
//   (GB/s)  (GB/s)
//          65536         16384   float32     sum
//          -1      41.25      40.10      63.02    1.59    2.38       0
//   # Avg bus bandwidth    : 2.38
// `time` is the mean, as nccl-tests' `time` and latency benchmarks' figure
// are (a median flatters a loop with a tail); algbw and busbw come from it.
// Each statistic is every rank's own, averaged over ranks. redop is "none"
// and root -1 where the op has none, as in nccl-tests. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/collective.h"

namespace fdrill {

// One rank's iteration times of one size, or their average over ranks.
struct TimeStats {
  double mean_us = 0;
  double p50_us = 0;
  double p99_us = 0;  // linear interpolation between closest ranks (common/core/stats.h)
};

struct SummaryRow {
  uint64_t bytes = 0;
  uint64_t count = 0;  // the op's count argument (Layout::count)
  TimeStats time;      // averaged over ranks
  uint64_t wrong = 0;  // wrong elements, all ranks and iterations
};

struct SummaryTable {
  Op op = Op::kAllReduce;
  DType dtype = DType::kFloat32;
  RedOp redop = RedOp::kSum;
  int root = 0;
  int nranks = 0;
  std::vector<SummaryRow> rows;
};

// The mean, p50 and p99 of `times_us`; all 0 when it is empty.
TimeStats Summarise(std::vector<double> times_us);

// The table, and "# Avg bus bandwidth" = the mean of the rows' busbw (0
// without rows), as nccl-tests.
std::string FormatSummary(const SummaryTable& table);

}  // namespace fdrill

// The closing table rank 0 prints to stdout, shaped like nccl-tests' so
// people and scripts that read those read this; one row per size:
//   # all_reduce on 4 ranks, median of the timed iterations
//   #       size         count      type   redop   root       time   algbw   busbw  #wrong
//   #        (B)    (elements)                                (us)  (GB/s)  (GB/s)
//          65536         16384   float32     sum     -1      41.25    1.59    2.38       0
//   # Avg bus bandwidth    : 2.38
// redop is "none" and root -1 where the op has none, as in nccl-tests.
// Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/collective.h"

namespace fdrill {

struct SummaryRow {
  uint64_t bytes = 0;
  uint64_t count = 0;  // the op's count argument (Layout::count)
  double time_us = 0;  // median iteration time (averaged over ranks)
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

// Median of `values` (mean of the middle two for an even count); 0 if empty.
double Median(std::vector<double> values);

// The table, and "# Avg bus bandwidth" = the mean of the rows' busbw (0
// without rows), as nccl-tests.
std::string FormatSummary(const SummaryTable& table);

}  // namespace fdrill

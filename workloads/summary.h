// The closing table rank 0 prints to stdout, shaped like nccl-tests' so
// people and scripts that read those read this:
//   #       size         count      type   redop     time   algbw   busbw  #wrong
//   #        (B)    (elements)                       (us)  (GB/s)  (GB/s)
//          65536         16384   float32     sum    41.25    1.59    1.59       0
//   # Avg bus bandwidth    : 1.59
// Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/collective.h"

namespace fdrill {

struct SummaryRow {
  Op op = Op::kAllReduce;
  DType dtype = DType::kFloat32;
  RedOp redop = RedOp::kSum;
  int nranks = 0;
  uint64_t bytes = 0;
  uint64_t count = 0;
  double time_us = 0;  // median iteration time (averaged over ranks)
  uint64_t wrong = 0;  // wrong elements, all ranks and iterations
};

// Median of `values` (mean of the middle two for an even count); 0 if empty.
double Median(std::vector<double> values);

std::string FormatSummary(const SummaryRow& row);

}  // namespace fdrill

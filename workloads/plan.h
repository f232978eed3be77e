// What one Config does on a given number of ranks: each size's buffer
// Layout, checked against the rank count before any buffer is allocated:
// sizes the op cannot split evenly, a root that is not a rank, rank counts
// beyond the data check's exact range. Every rank computes the same plan
// from the same Config, so they all fail alike with no exchange (rank 0
// prints the error). Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "common/core/result.h"
#include "workloads/collective.h"
#include "workloads/config.h"

namespace fdrill {

struct SizeStep {
  uint64_t bytes = 0;  // nccl-tests' size: the larger buffer
  Layout layout;
};

// One step per Config::sizes entry. Errors name the flag to change.
Result<std::vector<SizeStep>> PlanSizes(const Config& config, int nranks);

// The largest send / receive buffer of the plan, in bytes: what a backend
// allocates once for the whole sweep.
uint64_t MaxSendBytes(const std::vector<SizeStep>& plan, DType dtype);
uint64_t MaxRecvBytes(const std::vector<SizeStep>& plan, DType dtype);

}  // namespace fdrill

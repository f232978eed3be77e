// The message sizes of one run, made from nccl-tests' flags exactly as
// nccl-tests makes them: start at -b (min); then multiply by -f when it is
// above 1, else add -i (step bytes); keep every size <= -e (max). A max that
// the steps do not land on is simply not reached: -b 8 -e 100 -f 2 gives
// 8 16 32 64. Unlike nccl-tests, -e defaults to -b (one size), and sizes
// must be positive. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/core/result.h"

namespace fdrill {

struct SweepFlags {
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
  uint64_t factor = 1;            // -f; 1: add step_bytes instead
  uint64_t step_bytes = 1 << 20;  // -i
};

// A guard against sweeps that would run for ever (-b 1 -e 1G -i 1).
inline constexpr size_t kMaxSweepSizes = 1000;

// Errors name the flag: "-e/--maxbytes 1024 is less than -b/--minbytes 4096".
Result<std::vector<uint64_t>> SweepSizes(const SweepFlags& flags);

}  // namespace fdrill

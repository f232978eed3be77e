#include "workloads/train_reference.h"

#include <vector>

#include "workloads/checkpoint.h"
#include "workloads/pattern.h"
#include "workloads/train.h"

namespace fdrill {

namespace {

// float64's period P (pattern.h): the all_reduce/sum input of element x at
// step s depends on (s + x) mod P only, so every element with the same
// x mod P sees the same sums and, starting from the same state, keeps the
// same state. The reference tracks P lanes instead of every element
// (tests/workloads/train_reference_test.cc checks it against the plain loop).
constexpr uint64_t kFloat64Period = 61;

}  // namespace

uint64_t TrainReferenceDigest(int nranks, uint64_t count, int64_t steps) {
  const DataPattern pattern(Op::kAllReduce, DType::kFloat64, RedOp::kSum, nranks, 0);
  const uint64_t lanes = std::min(count, kFloat64Period);
  std::vector<double> lane(lanes, kTrainInitialState);
  for (int64_t step = 0; step < steps; ++step) {
    for (uint64_t l = 0; l < lanes; ++l) {
      // Small whole numbers: their sum is exact in any order, as the
      // all-reduce's is.
      double sum = 0;
      for (int r = 0; r < nranks; ++r) sum += pattern.Input(r, step, l);
      lane[l] = TrainUpdate(lane[l], sum);
    }
  }
  std::vector<double> state(count);
  for (uint64_t x = 0; x < count; ++x) state[x] = lane[x % lanes];
  return StateDigest(state);
}

}  // namespace fdrill

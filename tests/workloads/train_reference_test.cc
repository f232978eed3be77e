#include "workloads/train_reference.h"

#include <vector>

#include <gtest/gtest.h>

#include "workloads/checkpoint.h"
#include "workloads/pattern.h"
#include "workloads/train.h"

namespace fdrill {
namespace {

// Every element on its own, as the training loop does it.
uint64_t PlainDigest(int nranks, uint64_t count, int64_t steps) {
  const DataPattern pattern(Op::kAllReduce, DType::kFloat64, RedOp::kSum, nranks, 0);
  std::vector<double> state(count, kTrainInitialState);
  for (int64_t s = 0; s < steps; ++s) {
    for (uint64_t j = 0; j < count; ++j) {
      double sum = 0;
      for (int r = 0; r < nranks; ++r) sum += pattern.Input(r, s, j);
      state[j] = TrainUpdate(state[j], sum);
    }
  }
  return StateDigest(state);
}

TEST(TrainReference, LanesEqualThePlainLoop) {
  for (int nranks : {1, 2, 4, 7}) {
    for (uint64_t count : {1u, 60u, 61u, 62u, 1000u}) {
      for (int64_t steps : {0, 1, 5, 130}) {
        EXPECT_EQ(TrainReferenceDigest(nranks, count, steps), PlainDigest(nranks, count, steps))
            << nranks << " ranks, " << count << " elements, " << steps << " steps";
      }
    }
  }
}

TEST(TrainReference, DependsOnStepsRanksAndSize) {
  const uint64_t d = TrainReferenceDigest(4, 1024, 100);
  EXPECT_NE(d, TrainReferenceDigest(4, 1024, 99));
  EXPECT_NE(d, TrainReferenceDigest(3, 1024, 100));
  EXPECT_NE(d, TrainReferenceDigest(4, 1025, 100));
}

}  // namespace
}  // namespace fdrill

#include "workloads/pattern.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

namespace fdrill {
namespace {

// The reduced buffer every rank should hold: the sum of every rank's input,
// added in float as a backend would.
std::vector<float> ReduceInputs(int nranks, int64_t iter, size_t count) {
  std::vector<float> sum(count, 0.0f), input(count);
  for (int r = 0; r < nranks; ++r) {
    FillInput(r, iter, input);
    for (size_t j = 0; j < count; ++j) sum[j] += input[j];
  }
  return sum;
}

TEST(WorkloadPattern, ValuesAreSmallPositiveIntegers) {
  for (int rank : {0, 1, 2, 60, 61, 1000}) {
    for (int64_t iter : {0, 1, 17, 1000000007}) {
      for (uint64_t j = 0; j < 200; ++j) {
        float v = PatternValue(rank, iter, j);
        EXPECT_EQ(v, std::floor(v));
        EXPECT_GE(v, 1.0f);
        EXPECT_LE(v, rank == 0 ? 121.0f : 61.0f);
      }
    }
  }
}

TEST(WorkloadPattern, FillInputMatchesPatternValueBeyondOnePeriod) {
  std::vector<float> buf(1000);
  FillInput(3, 42, buf);
  for (uint64_t j = 0; j < buf.size(); ++j) ASSERT_EQ(buf[j], PatternValue(3, 42, j)) << j;
}

TEST(WorkloadPattern, ReducedInputsPassTheCheck) {
  for (int nranks : {1, 2, 3, 8, 61, 64}) {
    for (int64_t iter : {0, 5, 123}) {
      std::vector<float> sum = ReduceInputs(nranks, iter, 4096);
      CheckResult check = CheckAllReduceSum(nranks, iter, sum);
      EXPECT_EQ(check.wrong, 0u) << "nranks " << nranks << " iter " << iter;
    }
  }
}

TEST(WorkloadPattern, ExpectedSumIsExactAtTheRankLimit) {
  // 61n + 60 is the largest possible sum; it must still be an exact float.
  float top = ExpectedSum(kMaxExactRanks, 0, 60);
  double exact = 0;
  for (int r = 0; r < kMaxExactRanks; ++r) exact += PatternValue(r, 0, 60);
  EXPECT_EQ(static_cast<double>(top), exact);
  EXPECT_LE(61.0 * kMaxExactRanks + 60, std::pow(2.0, 24));
}

TEST(WorkloadPattern, OneCorruptedElementIsCountedWithItsPosition) {
  std::vector<float> sum = ReduceInputs(2, 17, 1024);
  float expected = sum[5];
  sum[5] += 1.0f;
  CheckResult check = CheckAllReduceSum(2, 17, sum);
  EXPECT_EQ(check.wrong, 1u);
  EXPECT_EQ(check.first_index, 5u);
  EXPECT_EQ(check.got, expected + 1.0f);
  EXPECT_EQ(check.expected, expected);
  EXPECT_EQ(DescribeFailure(1, 17, sum.size(), check),
            "data check FAILED: rank 1 iter 17: 1 of 1024 elements wrong, first at index 5: got " +
                std::to_string(static_cast<int>(expected + 1)) + " expected " +
                std::to_string(static_cast<int>(expected)));
}

TEST(WorkloadPattern, EveryWrongElementIsCountedAndTheFirstReported) {
  std::vector<float> sum = ReduceInputs(4, 3, 500);
  sum[400] = 0.0f;
  sum[7] = -sum[7];
  sum[250] = std::numeric_limits<float>::quiet_NaN();
  CheckResult check = CheckAllReduceSum(4, 3, sum);
  EXPECT_EQ(check.wrong, 3u);
  EXPECT_EQ(check.first_index, 7u);
}

TEST(WorkloadPattern, ExpectedSumVariesWithPositionForEveryRankCount) {
  // The reason rank 0's values differ from the others' (see pattern.h).
  for (int nranks = 1; nranks <= 250; ++nranks) {
    std::set<float> sums;
    for (uint64_t j = 0; j < 61; ++j) sums.insert(ExpectedSum(nranks, 0, j));
    EXPECT_GT(sums.size(), 1u) << "constant expected sum for " << nranks << " ranks";
  }
}

TEST(WorkloadPattern, StaleBufferFromThePreviousIterationFails) {
  for (int nranks : {1, 2, 61, 122}) {
    std::vector<float> previous = ReduceInputs(nranks, 9, 61);
    EXPECT_GT(CheckAllReduceSum(nranks, 10, previous).wrong, 0u) << nranks << " ranks";
  }
}

}  // namespace
}  // namespace fdrill

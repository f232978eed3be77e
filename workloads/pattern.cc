#include "workloads/pattern.h"

#include <fmt/format.h>

#include <array>

namespace fdrill {

namespace {

constexpr uint64_t kPeriod = 61;

// t = (3i + j) mod 61, without overflow for any iteration or index.
uint64_t Phase(int64_t iter, uint64_t index) {
  return (3 * (static_cast<uint64_t>(iter) % kPeriod) + index % kPeriod) % kPeriod;
}

uint64_t Value(int rank, uint64_t phase) {
  if (rank == 0) return 2 * phase + 1;
  return (7 * (static_cast<uint64_t>(rank) % kPeriod) + phase) % kPeriod + 1;
}

}  // namespace

float PatternValue(int rank, int64_t iter, uint64_t index) {
  return static_cast<float>(Value(rank, Phase(iter, index)));
}

void FillInput(int rank, int64_t iter, std::span<float> out) {
  // The value depends on j only through j mod 61: build one period, repeat it.
  std::array<float, kPeriod> period;
  for (uint64_t k = 0; k < kPeriod; ++k) period[k] = PatternValue(rank, iter, k);
  for (size_t j = 0; j < out.size(); ++j) out[j] = period[j % kPeriod];
}

float ExpectedSum(int nranks, int64_t iter, uint64_t index) {
  // Integer sum, converted once: exact for nranks <= kMaxExactRanks.
  uint64_t sum = 0;
  for (int r = 0; r < nranks; ++r) sum += Value(r, Phase(iter, index));
  return static_cast<float>(sum);
}

CheckResult CheckAllReduceSum(int nranks, int64_t iter, std::span<const float> got) {
  std::array<float, kPeriod> period;
  for (uint64_t k = 0; k < kPeriod; ++k) period[k] = ExpectedSum(nranks, iter, k);
  CheckResult result;
  for (size_t j = 0; j < got.size(); ++j) {
    float expected = period[j % kPeriod];
    if (got[j] == expected) continue;
    if (result.wrong == 0) {
      result.first_index = j;
      result.got = got[j];
      result.expected = expected;
    }
    ++result.wrong;
  }
  return result;
}

std::string DescribeFailure(int rank, int64_t iter, uint64_t count, const CheckResult& check) {
  return fmt::format(
      "data check FAILED: rank {} iter {}: {} of {} elements wrong, first at index {}: got {} expected {}", rank, iter,
      check.wrong, count, check.first_index, check.got, check.expected);
}

}  // namespace fdrill

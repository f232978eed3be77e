// The data check of fdrill-collective, for all_reduce(sum) of float32: the
// input each rank contributes, the sum every rank must get back, and an exact
// count of the elements that differ. Pure functions, thread-safe.
//
// Input of rank r, iteration i, element j, with t = (3i + j) mod 61:
//   rank 0:      2t + 1                  (odd integers 1..121)
//   rank r > 0:  ((7r + t) mod 61) + 1   (integers 1..61)
// Why rank 0 differs: 7 is coprime to 61, so any 61 consecutive ranks
// contribute every residue once and their sum is the same for every element;
// with a plain formula, a run of 61k ranks would have a constant expected sum
// and a stale or misplaced buffer would pass. Rank 0's doubled term keeps the
// sum varying with t for every rank count, so (as 3 generates Z_61) a buffer
// left from the previous iteration fails somewhere in every 61 elements.
// Exactness: every partial sum, in whatever order the backend adds, is an
// integer <= 61n + 60, and float32 holds every integer up to 2^24 exactly, so
// the result is bit-exact for n <= kMaxExactRanks = (2^24 - 60) / 61 = 275035.
// Equality (not a tolerance) is therefore the right test; NaN never matches.
// The expected sum is computed locally from the same formula.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace fdrill {

inline constexpr int kMaxExactRanks = ((1 << 24) - 60) / 61;

// The value rank `rank` contributes at (iter, index).
float PatternValue(int rank, int64_t iter, uint64_t index);

// out[j] = PatternValue(rank, iter, j) for every j.
void FillInput(int rank, int64_t iter, std::span<float> out);

// The all_reduce(sum) over ranks 0..nranks-1 at (iter, index).
float ExpectedSum(int nranks, int64_t iter, uint64_t index);

struct CheckResult {
  uint64_t wrong = 0;        // elements that differ from the expected sum
  uint64_t first_index = 0;  // valid when wrong > 0
  float got = 0;
  float expected = 0;
};

// Compares `got` element by element with ExpectedSum(nranks, iter, j).
// O(61 * nranks + got.size()).
CheckResult CheckAllReduceSum(int nranks, int64_t iter, std::span<const float> got);

// "data check FAILED: rank 1 iter 17: 1 of 1048576 elements wrong, first at
// index 5: got 9 expected 12"
std::string DescribeFailure(int rank, int64_t iter, uint64_t count, const CheckResult& check);

}  // namespace fdrill

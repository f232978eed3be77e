// Two-sample statistics for `fdrill compare`: is sample B's typical value
// different from sample A's? Pure, deterministic functions: the bootstrap
// draws from its own seeded generator (splitmix64 with Lemire's bounded
// integers), not from <random>'s distributions, whose output differs between
// standard libraries, so the same input gives the same interval everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace fdrill {

struct Interval {
  double low = 0;
  double high = 0;
};

// Percentile bootstrap of median(b) / median(a): `resamples` times, draw
// |a| values from a and |b| values from b with replacement and take the ratio
// of their medians; the interval is the (1-confidence)/2 and (1+confidence)/2
// percentiles (Percentile, stats.h) of those ratios. std::nullopt when either
// sample is empty or a resampled median of a is not positive.
std::optional<Interval> BootstrapRatioOfMedians(const std::vector<double>& a,
                                                const std::vector<double>& b, int resamples,
                                                uint64_t seed, double confidence = 0.95);

struct MannWhitney {
  double u = 0;        // U of b: pairs (a_i, b_j) with b_j > a_i, ties counting 1/2
  double p_value = 1;  // two-sided
};

// Mann–Whitney U test (Wilcoxon rank-sum) of a against b. The p-value uses
// the normal approximation with the tie-corrected variance and a continuity
// correction (scipy's mannwhitneyu(method="asymptotic")), sound from about 8
// values a side. std::nullopt when either sample is empty; p = 1 when every
// value is tied.
std::optional<MannWhitney> MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace fdrill

// Two-sample statistics for `fdrill compare`: how large is B's change
// against A, and how sure can we be? Pure, deterministic functions.
//
// The samples are independent measurements of one metric: one value per run
// (a campaign's runs), or, within a single run, the means of consecutive
// batches of iterations. A drill's iterations are autocorrelated (a slow
// stretch lasts several iterations), so treating each iteration as an
// independent sample overstates confidence; batch means of long enough
// batches are close to independent (the batch-means method of simulation
// output analysis).
#pragma once

#include <optional>
#include <vector>

namespace fdrill {

// B against A as a ratio, B/A, with a two-sided interval.
struct RatioInterval {
  double ratio = 1;
  double low = 1;
  double high = 1;
  // The spread the interval came from, on the scale it was computed on (the
  // standard deviation of log values, or of values / mean A), per sample,
  // and its degrees of freedom; RunsNeeded extrapolates from them.
  double spread = 0;
  double df = 0;
  bool log_scale = true;
};

// Welch's t interval for the ratio of B's mean to A's mean.
//   - every value positive: on log values, exp(mean log B - mean log A), so
//     the interval is symmetric in ratio terms (1.05 and 1/1.05 alike);
//   - else (a time of zero, nothing lost): (mean B - mean A) / mean A,
//     needing mean A > 0.
// One value on a side borrows the other side's spread (pooled, as if equal);
// one on both sides has no spread to go on: std::nullopt. Also nullopt for an
// empty side, a non-finite value, or mean A <= 0 with non-positive values.
// A side whose values are all equal has zero spread: the interval is a point.
std::optional<RatioInterval> RatioOfMeans(const std::vector<double>& a,
                                          const std::vector<double>& b, double confidence = 0.95);

// The means of `batches` consecutive batches of `series` (the last batch
// takes the remainder); fewer batches when the series is shorter than
// 2 x batches (at least two values a batch), none when it has fewer than 4.
// With WEIGHTS (one per value: an iteration's seconds), each batch's mean
// is weighted by them: a busbw's time-weighted rate, a stall counting for
// its length.
std::vector<double> BatchMeans(const std::vector<double>& series, int batches,
                               const std::vector<double>* weights = nullptr);

// How many samples per side an interval with `e`'s spread needs before it
// can decide against `threshold` (a fraction): clear of 1 ± threshold on the
// side the ratio lies, assuming the ratio stays where it is. std::nullopt
// when the ratio sits on the threshold (no count decides) or needs more than
// `max`; 0 when the spread is zero.
std::optional<int> RunsNeeded(const RatioInterval& e, double threshold, double confidence = 0.95,
                              int max = 1000);

// The p quantile of Student's t with df degrees of freedom (df > 0).
double StudentT(double p, double df);

}  // namespace fdrill

// Order statistics used by the analysis (reports/) and by fdrill-collective's
// closing table (workloads/summary.h). Pure functions on copies of their
// input; an empty input has no statistic (std::nullopt), never a made-up 0.
#pragma once

#include <optional>
#include <vector>

namespace fdrill {

// The p-th percentile (0 <= p <= 100) by linear interpolation between closest
// ranks (numpy's default, Hyndman & Fan type 7): with the values sorted as
// x[0..n-1], h = (n-1)·p/100 and the result is x[⌊h⌋] + (h-⌊h⌋)·(x[⌊h⌋+1]-x[⌊h⌋]).
// So p50 of {1,2,3,4} is 2.5 and p99 of 1..10 is 9.91.
std::optional<double> Percentile(std::vector<double> values, double p);

std::optional<double> Median(std::vector<double> values);

// Median absolute deviation: median(|x - median(x)|), unscaled. For normal
// data, 1.4826 × MAD estimates the standard deviation.
std::optional<double> MedianAbsoluteDeviation(const std::vector<double>& values);

}  // namespace fdrill

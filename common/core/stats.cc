#include "common/core/stats.h"

#include <algorithm>
#include <cmath>

namespace fdrill {

std::optional<double> Percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  const double h = (static_cast<double>(values.size()) - 1) * std::clamp(p, 0.0, 100.0) / 100;
  const size_t lo = static_cast<size_t>(std::floor(h));
  // The two closest ranks without sorting it all (the same values a sort
  // puts there; a phase of a day-long run has millions of iterations).
  const auto at_lo = values.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(values.begin(), at_lo, values.end());
  const double lo_value = *at_lo;
  const double hi_value =
      lo + 1 < values.size() ? *std::min_element(at_lo + 1, values.end()) : lo_value;
  return lo_value + (h - static_cast<double>(lo)) * (hi_value - lo_value);
}

std::optional<double> Median(std::vector<double> values) {
  return Percentile(std::move(values), 50);
}

std::optional<double> MedianAbsoluteDeviation(const std::vector<double>& values) {
  std::optional<double> center = Median(values);
  if (!center) return std::nullopt;
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - *center));
  return Median(std::move(deviations));
}

}  // namespace fdrill

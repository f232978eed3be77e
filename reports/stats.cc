#include "reports/stats.h"

#include <algorithm>
#include <cmath>

namespace fdrill {

std::optional<double> Percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double h = (static_cast<double>(values.size()) - 1) * std::clamp(p, 0.0, 100.0) / 100;
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (h - static_cast<double>(lo)) * (values[hi] - values[lo]);
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

#include "reports/digest.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace fdrill {

namespace {

std::optional<double> Number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  while (end != nullptr && (*end == ' ' || *end == '\t')) ++end;
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<double> RelativeDifference(const std::string& a, const std::string& b) {
  const auto x = Number(a), y = Number(b);
  if (!x || !y) return std::nullopt;
  const double scale = std::max(std::fabs(*x), std::fabs(*y));
  return scale == 0 ? 0.0 : std::fabs(*x - *y) / scale;
}

bool DigestsAgree(const std::string& got, const std::string& expected,
                  std::optional<double> tolerance) {
  if (got.empty() || expected.empty()) return false;
  if (!tolerance) return got == expected;
  const auto d = RelativeDifference(got, expected);
  return d && *d <= *tolerance;
}

}  // namespace fdrill

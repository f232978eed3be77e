#include "reports/cell_text.h"

#include <fmt/format.h>

namespace fdrill {

std::string CellNumber(const std::optional<double>& x, int decimals) {
  return x ? fmt::format("{:.{}f}", *x, decimals) : kNoValue;
}

std::string CellExpectValue(const ExpectValue& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "yes" : "no";
  if (const double* d = std::get_if<double>(&v)) return fmt::format("{:.4g}", *d);
  return kNoValue;
}

}  // namespace fdrill

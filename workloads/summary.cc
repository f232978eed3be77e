#include "workloads/summary.h"

#include <fmt/format.h>

#include <algorithm>

namespace fdrill {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

std::string FormatSummary(const SummaryRow& row) {
  double algbw = AlgBandwidthGbps(row.bytes, row.time_us * 1e3);
  double busbw = algbw * BusFactor(row.op, row.nranks);
  std::string out;
  out += fmt::format("# {} on {} ranks, median of the timed iterations\n", OpName(row.op), row.nranks);
  out += fmt::format("#{:>11} {:>13} {:>9} {:>7} {:>10} {:>7} {:>7} {:>7}\n", "size", "count", "type", "redop", "time",
                     "algbw", "busbw", "#wrong");
  out += fmt::format("#{:>11} {:>13} {:>9} {:>7} {:>10} {:>7} {:>7} {:>7}\n", "(B)", "(elements)", "", "", "(us)",
                     "(GB/s)", "(GB/s)", "");
  out += fmt::format("{:>12} {:>13} {:>9} {:>7} {:>10.2f} {:>7.2f} {:>7.2f} {:>7}\n", row.bytes, row.count,
                     DTypeName(row.dtype), RedOpName(row.redop), row.time_us, algbw, busbw, row.wrong);
  out += fmt::format("# Avg bus bandwidth    : {:.2f}\n", busbw);
  return out;
}

}  // namespace fdrill

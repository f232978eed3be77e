#include "workloads/summary.h"

#include <algorithm>

#include <fmt/format.h>

namespace fdrill {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

std::string FormatSummary(const SummaryTable& table) {
  const int root = OpHasRoot(table.op) ? table.root : -1;
  const std::string_view redop = RedOpLabel(table.op, table.redop);
  std::string out;
  out += fmt::format("# {} on {} ranks, median of the timed iterations\n", OpName(table.op),
                     table.nranks);
  out += fmt::format("#{:>11} {:>13} {:>9} {:>7} {:>6} {:>10} {:>7} {:>7} {:>7}\n", "size", "count",
                     "type", "redop", "root", "time", "algbw", "busbw", "#wrong");
  out += fmt::format("#{:>11} {:>13} {:>9} {:>7} {:>6} {:>10} {:>7} {:>7} {:>7}\n", "(B)",
                     "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
  double busbw_sum = 0;
  for (const SummaryRow& row : table.rows) {
    const double algbw = AlgBandwidthGbps(row.bytes, row.time_us * 1e3);
    const double busbw = algbw * BusFactor(table.op, table.nranks);
    busbw_sum += busbw;
    out += fmt::format("{:>12} {:>13} {:>9} {:>7} {:>6} {:>10.2f} {:>7.2f} {:>7.2f} {:>7}\n",
                       row.bytes, row.count, DTypeName(table.dtype), redop, root, row.time_us,
                       algbw, busbw, row.wrong);
  }
  const double average =
      table.rows.empty() ? 0.0 : busbw_sum / static_cast<double>(table.rows.size());
  out += fmt::format("# Avg bus bandwidth    : {:.2f}\n", average);
  return out;
}

}  // namespace fdrill

#include "workloads/summary.h"

#include <numeric>

#include <fmt/format.h>

#include "common/core/stats.h"

namespace fdrill {

TimeStats Summarise(std::vector<double> times_us) {
  if (times_us.empty()) return {};
  TimeStats stats;
  stats.mean_us =
      std::accumulate(times_us.begin(), times_us.end(), 0.0) / static_cast<double>(times_us.size());
  stats.p99_us = *Percentile(times_us, 99);
  stats.p50_us = *Percentile(std::move(times_us), 50);
  return stats;
}

std::string FormatSummary(const SummaryTable& table) {
  const int root = OpHasRoot(table.op) ? table.root : -1;
  const std::string_view redop = RedOpLabel(table.op, table.redop);
  std::string out;
  out += fmt::format(
      "# {} on {} ranks; time: mean of the timed iterations, p50 and p99 their percentiles\n",
      OpName(table.op), table.nranks);
  out += fmt::format("#{:>11} {:>13} {:>9} {:>7} {:>6} {:>10} {:>10} {:>10} {:>7} {:>7} {:>7}\n",
                     "size", "count", "type", "redop", "root", "time", "p50", "p99", "algbw",
                     "busbw", "#wrong");
  out +=
      fmt::format("#{:>11} {:>13} {:>9} {:>7} {:>6} {:>10} {:>10} {:>10} {:>7} {:>7} {:>7}\n",
                  "(B)", "(elements)", "", "", "", "(us)", "(us)", "(us)", "(GB/s)", "(GB/s)", "");
  double busbw_sum = 0;
  for (const SummaryRow& row : table.rows) {
    const double algbw = AlgBandwidthGbps(row.bytes, row.time.mean_us * 1e3);
    const double busbw = algbw * BusFactor(table.op, table.nranks);
    busbw_sum += busbw;
    out += fmt::format(
        "{:>12} {:>13} {:>9} {:>7} {:>6} {:>10.2f} {:>10.2f} {:>10.2f} {:>7.2f} {:>7.2f} {:>7}\n",
        row.bytes, row.count, DTypeName(table.dtype), redop, root, row.time.mean_us,
        row.time.p50_us, row.time.p99_us, algbw, busbw, row.wrong);
  }
  const double average =
      table.rows.empty() ? 0.0 : busbw_sum / static_cast<double>(table.rows.size());
  out += fmt::format("# Avg bus bandwidth    : {:.2f}\n", average);
  return out;
}

}  // namespace fdrill

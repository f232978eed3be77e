#include "reports/series.h"

#include <algorithm>

namespace fdrill {

double OpBusFactor(std::string_view op, int nranks) {
  if (nranks <= 1) return 1.0;
  const double n = nranks;
  if (op == "all_reduce") return 2 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "alltoall") return (n - 1) / n;
  return 1.0;
}

namespace {

// The records' own busbw/algbw ratio when they carry one, else the op's.
double BusFactorOf(const MetricTable& m, std::span<const uint32_t> rows) {
  for (uint32_t r : rows) {
    if (m.algbw_gbps(r) > 0 && m.busbw_gbps(r) > 0) return m.busbw_gbps(r) / m.algbw_gbps(r);
  }
  const MetricTable::Source& first = m.source(rows.front());
  const int n = first.nranks > 0 ? first.nranks : static_cast<int>(rows.size());
  return OpBusFactor(first.op, n);
}

Iteration Fold(const MetricTable& m, std::span<const uint32_t> rows) {
  Iteration it;
  it.iter = m.iter(rows.front());
  it.attempt = m.source(rows.front()).attempt;
  it.end_s = m.t(rows.front());
  int64_t bytes = 0;
  it.ranks.reserve(rows.size());
  for (uint32_t r : rows) {
    const MetricTable::Source& s = m.source(r);
    // As the job saw it: the line-up a straggler makes its peers wait in,
    // the collective, then the settle (records are stamped after it).
    it.time_ms = std::max(it.time_ms, m.wait_ms(r) + m.time_ms(r));
    it.end_s = std::max(it.end_s, m.t(r));
    bytes = std::max(bytes, s.bytes);
    it.ranks.push_back({s.rank, s.node, m.time_ms(r), m.wait_ms(r)});
  }
  std::sort(it.ranks.begin(), it.ranks.end(),
            [](const RankSample& a, const RankSample& b) { return a.rank < b.rank; });
  it.start_s = it.end_s - it.time_ms / 1000;
  // bytes / (time_ms · 1e-3 s) / 1e9 = bytes / time_ms / 1e6 GB/s.
  it.busbw_gbps = static_cast<double>(bytes) * BusFactorOf(m, rows) / it.time_ms / 1e6;
  return it;
}

}  // namespace

std::vector<Iteration> BuildIterations(const MetricTable& metrics) {
  std::vector<uint32_t> rows(metrics.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint32_t>(i);
  return BuildIterations(metrics, rows);
}

// Records in iter order (file order within an iteration; the file is usually
// in iter order already), then folded run by run.
std::vector<Iteration> BuildIterations(const MetricTable& metrics, std::span<const uint32_t> rows) {
  // A restarted job repeats steps: (attempt, iter) names an iteration.
  const auto key = [&](uint32_t r) {
    return std::pair(metrics.source(r).attempt, metrics.iter(r));
  };
  const auto by_iter = [&](uint32_t a, uint32_t b) { return key(a) < key(b); };
  std::vector<uint32_t> sorted;
  if (!std::is_sorted(rows.begin(), rows.end(), by_iter)) {
    sorted.assign(rows.begin(), rows.end());
    std::stable_sort(sorted.begin(), sorted.end(), by_iter);
    rows = sorted;
  }
  size_t count = 0;
  for (size_t i = 0; i < rows.size(); ++i) count += i == 0 || key(rows[i]) != key(rows[i - 1]);
  std::vector<Iteration> series;
  series.reserve(count);
  for (size_t i = 0; i < rows.size();) {
    size_t j = i + 1;
    while (j < rows.size() && key(rows[j]) == key(rows[i])) ++j;
    series.push_back(Fold(metrics, rows.subspan(i, j - i)));
    i = j;
  }
  return series;
}

std::vector<const Iteration*> EndingIn(const std::vector<Iteration>& series, double lo, double hi,
                                       bool include_hi) {
  std::vector<const Iteration*> out;
  for (const Iteration& it : series) {
    if (it.end_s >= lo && (it.end_s < hi || (include_hi && it.end_s == hi))) out.push_back(&it);
  }
  return out;
}

std::vector<const Iteration*> Overlapping(const std::vector<Iteration>& series, double lo,
                                          double hi) {
  std::vector<const Iteration*> out;
  for (const Iteration& it : series) {
    if (it.start_s < hi && it.end_s > lo) out.push_back(&it);
  }
  return out;
}

std::optional<double> TimeWeightedBusbw(const std::vector<const Iteration*>& overlapping, double lo,
                                        double hi) {
  double covered = 0, weighted = 0;
  for (const Iteration* it : overlapping) {
    const double overlap = std::min(it->end_s, hi) - std::max(it->start_s, lo);
    if (overlap <= 0) continue;
    covered += overlap;
    weighted += overlap * it->busbw_gbps;
  }
  if (covered <= 0 || weighted <= 0) return std::nullopt;
  return weighted / covered;
}

std::vector<double> BusbwOf(const std::vector<const Iteration*>& iterations) {
  std::vector<double> out;
  out.reserve(iterations.size());
  for (const Iteration* it : iterations) out.push_back(it->busbw_gbps);
  return out;
}

std::vector<double> TimeMsOf(const std::vector<const Iteration*>& iterations) {
  std::vector<double> out;
  out.reserve(iterations.size());
  for (const Iteration* it : iterations) out.push_back(it->time_ms);
  return out;
}

}  // namespace fdrill

#include "reports/series.h"

#include <algorithm>
#include <span>

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
double BusFactorOf(std::span<const MetricRecord* const> records) {
  for (const MetricRecord* r : records) {
    if (r->algbw_gbps > 0 && r->busbw_gbps > 0) return r->busbw_gbps / r->algbw_gbps;
  }
  const MetricRecord& first = *records.front();
  const int n = first.nranks > 0 ? first.nranks : static_cast<int>(records.size());
  return OpBusFactor(first.op, n);
}

Iteration Fold(int64_t iter, std::span<const MetricRecord* const> records) {
  Iteration it;
  it.iter = iter;
  it.end_s = records.front()->t;
  int64_t bytes = 0;
  for (const MetricRecord* r : records) {
    // As the job saw it: the line-up a straggler makes its peers wait in,
    // then the collective.
    it.time_ms = std::max(it.time_ms, r->wait_ms + r->time_ms);
    it.end_s = std::max(it.end_s, r->t);
    bytes = std::max(bytes, r->bytes);
    it.ranks.push_back({r->rank, r->node, r->time_ms, r->wait_ms});
  }
  std::sort(it.ranks.begin(), it.ranks.end(),
            [](const RankSample& a, const RankSample& b) { return a.rank < b.rank; });
  it.start_s = it.end_s - it.time_ms / 1000;
  // bytes / (time_ms · 1e-3 s) / 1e9 = bytes / time_ms / 1e6 GB/s.
  it.busbw_gbps = static_cast<double>(bytes) * BusFactorOf(records) / it.time_ms / 1e6;
  return it;
}

}  // namespace

// Records in iter order (file order within an iteration; the file is usually
// in iter order already), then folded run by run.
std::vector<Iteration> BuildIterations(const std::vector<MetricRecord>& metrics) {
  std::vector<const MetricRecord*> order;
  order.reserve(metrics.size());
  for (const MetricRecord& r : metrics) order.push_back(&r);
  // A restarted job repeats steps: (attempt, iter) names an iteration.
  const auto by_iter = [](const MetricRecord* a, const MetricRecord* b) {
    return a->attempt != b->attempt ? a->attempt < b->attempt : a->iter < b->iter;
  };
  if (!std::is_sorted(order.begin(), order.end(), by_iter)) {
    std::stable_sort(order.begin(), order.end(), by_iter);
  }
  std::vector<Iteration> series;
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;
    while (j < order.size() && order[j]->iter == order[i]->iter &&
           order[j]->attempt == order[i]->attempt)
      ++j;
    series.push_back(Fold(order[i]->iter, std::span(order.data() + i, j - i)));
    series.back().attempt = order[i]->attempt;
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

#include "reports/metric_table.h"

#include <algorithm>

namespace fdrill {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

bool Matches(const MetricTable::Source& s, const MetricFields& f) {
  return s.rank == f.rank && s.nranks == f.nranks && s.attempt == f.attempt && s.bytes == f.bytes &&
         s.node == f.node && s.op == f.op && s.workload == f.workload;
}

}  // namespace

uint32_t MetricTable::SourceOf(const MetricFields& f) {
  if (last_.empty()) last_.assign(kLastSize, kNone);
  uint32_t& last = last_[static_cast<uint32_t>(f.rank) % kLastSize];
  if (last != kNone && Matches(sources_[last], f)) return last;
  SourceKey key{std::string(f.workload),
                std::string(f.node),
                std::string(f.op),
                f.rank,
                f.nranks,
                f.attempt,
                f.bytes};
  auto [it, added] =
      source_ids_.try_emplace(std::move(key), static_cast<uint32_t>(sources_.size()));
  if (added) {
    sources_.push_back({.workload = std::string(f.workload),
                        .node = std::string(f.node),
                        .op = std::string(f.op),
                        .rank = f.rank,
                        .nranks = f.nranks,
                        .attempt = f.attempt,
                        .bytes = f.bytes});
  }
  last = it->second;
  return last;
}

void MetricTable::Append(const MetricFields& f) {
  if (f.wrong != 0) wrong_.emplace_back(t_.size(), f.wrong);
  source_.push_back(SourceOf(f));
  t_.push_back(f.t);
  time_ms_.push_back(f.time_ms);
  wait_ms_.push_back(f.wait_ms);
  algbw_.push_back(f.algbw_gbps);
  busbw_.push_back(f.busbw_gbps);
  iter_.push_back(f.iter);
}

void MetricTable::push_back(const MetricRecord& m) {
  Append({.rank = m.rank,
          .nranks = m.nranks,
          .node = m.node,
          .iter = m.iter,
          .attempt = m.attempt,
          .op = m.op,
          .workload = m.workload,
          .bytes = m.bytes,
          .time_ms = m.time_ms,
          .wait_ms = m.wait_ms,
          .algbw_gbps = m.algbw_gbps,
          .busbw_gbps = m.busbw_gbps,
          .wrong = m.wrong,
          .t = m.t});
}

void MetricTable::reserve(size_t records) {
  source_.reserve(records);
  t_.reserve(records);
  time_ms_.reserve(records);
  wait_ms_.reserve(records);
  algbw_.reserve(records);
  busbw_.reserve(records);
  iter_.reserve(records);
}

MetricRecord MetricTable::operator[](size_t i) const {
  const Source& s = source(i);
  int64_t wrong = 0;
  auto w = std::lower_bound(wrong_.begin(), wrong_.end(), std::pair<size_t, int64_t>{i, 0},
                            [](const auto& a, const auto& b) { return a.first < b.first; });
  if (w != wrong_.end() && w->first == i) wrong = w->second;
  return {.rank = s.rank,
          .nranks = s.nranks,
          .node = s.node,
          .iter = iter_[i],
          .attempt = s.attempt,
          .op = s.op,
          .workload = s.workload,
          .bytes = s.bytes,
          .time_ms = time_ms_[i],
          .wait_ms = wait_ms_[i],
          .algbw_gbps = algbw_[i],
          .busbw_gbps = busbw_[i],
          .wrong = wrong,
          .t = t_[i]};
}

std::vector<uint32_t> RecordsOfWorkload(const MetricTable& table, std::string_view workload) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < table.size(); ++i) {
    if (table.source(i).workload == workload) out.push_back(static_cast<uint32_t>(i));
  }
  return out;
}

}  // namespace fdrill

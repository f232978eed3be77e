#include "reports/rank_evidence.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "common/core/stats.h"
#include "reports/analysis.h"
#include "reports/series.h"

namespace fdrill {

namespace {

// Per rank, the delay it caused its peers over the iterations that end in
// [from, to), in ms per second: in each iteration with every rank, the rank
// that waited least in the line-up arrived last, and the others' median
// wait is what they waited for it. Its node too.
std::map<int, std::pair<double, std::string>> CausedDelay(const std::vector<Iteration>& series,
                                                          double from, double to) {
  std::map<int, std::pair<double, std::string>> out;
  if (!(to > from)) return out;
  size_t ranks = 0;
  for (const Iteration* it : EndingIn(series, from, to, false))
    ranks = std::max(ranks, it->ranks.size());
  for (const Iteration* it : EndingIn(series, from, to, false)) {
    if (it->ranks.size() < 2 || it->ranks.size() < ranks) continue;
    const RankSample* last = &it->ranks.front();
    for (const RankSample& r : it->ranks) {
      out.try_emplace(r.rank, 0.0, r.node);
      if (r.wait_ms < last->wait_ms) last = &r;
    }
    std::vector<double> others;
    for (const RankSample& r : it->ranks) {
      if (&r != last) others.push_back(r.wait_ms);
    }
    out[last->rank].first += Median(std::move(others)).value_or(0) - last->wait_ms;
  }
  for (auto& [rank, v] : out) v.first /= (to - from);
  return out;
}

// The rate a cumulative counter rose at between its last sample at or
// before FROM (or, when it started later — a rank's first sample comes
// after the baseline began — its first sample) and its last at or before
// TO (resets as CounterIncrease); nullopt without two such samples. With
// `inside`, the share of the time between those samples that lies in
// [FROM, TO]: a window that opened between two samples is measured mostly
// before it until the next ones come.
std::optional<double> RateOver(const CounterIndex::Series& s, double from, double to,
                               double* inside = nullptr) {
  const std::pair<double, double>* a = LastSampleAtOrBefore(s, from);
  if (a == nullptr && !s.empty()) a = &s.front();
  const std::pair<double, double>* b = LastSampleAtOrBefore(s, to);
  if (a == nullptr || b == nullptr || !(b->first > a->first)) return std::nullopt;
  const double span = b->first - a->first;
  if (inside != nullptr) *inside = (std::min(b->first, to) - std::max(a->first, from)) / span;
  return CounterIncrease(s, a->first, b->first) / span;
}

// rates[i] over the median of the other rates; 1 where that median is 0.
double ShareOfPeers(const std::vector<double>& rates, size_t i) {
  std::vector<double> peers;
  for (size_t j = 0; j < rates.size(); ++j) {
    if (j != i) peers.push_back(rates[j]);
  }
  const double median = Median(std::move(peers)).value_or(0);
  return median > 0 ? rates[i] / median : 1;
}

}  // namespace

// Signal 3: the rank its peers waited for. Clear when it caused at least
// kRankMinExcess ms/s more delay than in the reference and twice as much,
// and 15 % more than any other rank.
constexpr double kRankMinExcess = 30;
std::optional<RankEvidence> LastToArrive(const std::vector<Iteration>& series,
                                         const LocaliseWindow& w) {
  const auto in = CausedDelay(series, w.from_s, w.to_s);
  if (in.size() < 2) return std::nullopt;
  RankEvidence e;
  bool first = true;
  for (const auto& [rank, v] : in) {
    if (first || v.first > e.caused) {
      if (!first) e.next = std::max(e.next, e.caused);
      e.rank = rank;
      e.node = v.second;
      e.caused = v.first;
      first = false;
    } else {
      e.next = std::max(e.next, v.first);
    }
  }
  if (w.ref_to_s > w.ref_from_s) {
    const auto ref = CausedDelay(series, w.ref_from_s, w.ref_to_s);
    if (auto it = ref.find(e.rank); it != ref.end()) e.ref_caused = it->second.first;
  }
  const bool clear = e.caused - e.ref_caused >= kRankMinExcess && e.caused >= 2 * e.ref_caused &&
                     e.caused >= 1.15 * e.next;
  if (!clear) return std::nullopt;
  return e;
}

// Signal 3b: the rank that got less CPU time than its peers in the window
// ("rank/<r>.cpu_seconds", agents/counters.h): at most 85 % of their median
// rate, and 12 points less of it than it got in the reference. Compared
// within the window, not against each rank's own reference rate: where
// ranks share cores (the emulated fabric: four busy-polling ranks on two),
// one rank's rate wanders 0.3-0.7 cores from one 4 s stretch to the next,
// so a rank's reference rate alone named a bystander (72 % of its own
// baseline; the straggler, stopped 50 ms of 200, 48-58 % of its peers in
// six runs, and 55-73 % of its own baseline). The reference share keeps a
// rank that always runs less (more threads elsewhere, a busier node) from
// being named for it. The rank with the smallest share is the one with the
// smallest rate: leaving the smallest rate out leaves the largest median of
// the rest, so one median per window is taken, not one per rank. `sampled`
// says whether the agents sampled any rank's CPU time at all (older agents
// and some hosts do not): without it, this signal cannot speak.
std::optional<CpuEvidence> StarvedRank(const CounterIndex& counters, const LocaliseWindow& w,
                                       bool* sampled) {
  *sampled = *sampled || counters.rank_cpu_sampled();
  if (!(w.ref_to_s > w.ref_from_s)) return std::nullopt;
  std::vector<CpuEvidence> ranks;
  std::vector<double> in_rates, ref_rates;
  // A rank whose CPU time never changed ran at rate 0 in the reference:
  // below 0.05, it is skipped, so only the changing series can speak.
  for (const auto& [key, s] : counters.changing()) {
    const auto [link, counter] = SplitCounterName(key.second);
    if (!link.starts_with("rank/") || counter != "cpu_seconds") continue;
    const std::optional<double> ref = RateOver(*s, w.ref_from_s, w.ref_to_s);
    double inside = 1;
    const std::optional<double> in = RateOver(*s, w.from_s, w.to_s, &inside);
    if (!ref || !in || *ref < 0.05) continue;
    ranks.push_back({.rank = std::atoi(std::string(link.substr(5)).c_str()),
                     .node = key.first,
                     .inside = inside});
    in_rates.push_back(*in);
    ref_rates.push_back(*ref);
  }
  if (ranks.size() < 2) return std::nullopt;
  const size_t low = std::min_element(in_rates.begin(), in_rates.end()) - in_rates.begin();
  CpuEvidence e = ranks[low];
  e.share = ShareOfPeers(in_rates, low);
  e.ref_share = ShareOfPeers(ref_rates, low);
  if (e.share > 0.85 || e.ref_share - e.share < 0.12) return std::nullopt;
  return e;
}

bool CpuMeasuredInside(const CounterIndex& counters, const LocaliseWindow& w) {
  for (const auto& [key, s] : counters.changing()) {
    const auto [link, counter] = SplitCounterName(key.second);
    if (!link.starts_with("rank/") || counter != "cpu_seconds") continue;
    double inside = 0;
    if (RateOver(*s, w.from_s, w.to_s, &inside) && inside >= kMinInside) return true;
  }
  return false;
}

std::string CpuWords(const CpuEvidence& c) {
  return fmt::format(
      "rank {} ({}) got {:.0f} % of the CPU time its peers got ({:.0f} % in the baseline): "
      "stopped or starved",
      c.rank, c.node, 100 * c.share, 100 * c.ref_share);
}

std::string RankWords(const RankEvidence& r) {
  return fmt::format(
      "rank {} ({}) entered the collective last: its peers waited {:.0f} ms per second for it "
      "({:.0f} in the baseline; the next rank {:.0f})",
      r.rank, r.node, r.caused, r.ref_caused, r.next);
}

}  // namespace fdrill

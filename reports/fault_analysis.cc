// Per-fault measurements: slowdown, time to impact, stall, time to recover
// and the culprit. Definitions: reports/README.md.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "common/core/stats.h"
#include "reports/analysis.h"
#include "reports/compound.h"
#include "reports/localise.h"

namespace fdrill {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Sorts after every index: upper_bound({t, kNoIndex}) is the first apply after t.
constexpr size_t kNoIndex = std::numeric_limits<size_t>::max();

std::string Describe(const FaultStats& f) {
  std::string what = f.kind;
  if (!f.node.empty()) what += (what.empty() ? "on " : " on ") + f.node;
  return what.empty() ? "fault " + f.id : fmt::format("fault {} ({})", f.id, what);
}

// The localisation over the fault's window against the baseline's span,
// and the culprit fields it fills.
void LocaliseFault(const CounterIndex& counters, const std::vector<Iteration>& series,
                   const Baseline& baseline, double bound_s,
                   const std::vector<InventorySwitch>& switches, FaultStats* f) {
  double to = f->reverted_at_s.value_or(bound_s);
  if (!std::isfinite(to)) {
    to = f->applied_at_s;
    for (const auto& [key, s] : counters.series()) to = std::max(to, s.back().first);
    if (!series.empty()) to = std::max(to, series.back().end_s);
  }
  f->localisation = Localise(counters, series,
                             {.from_s = f->applied_at_s,
                              .to_s = to,
                              .ref_from_s = baseline.start_s,
                              .ref_to_s = baseline.end_s},
                             switches);
  if (!f->localisation) return;
  const Culprit& c = *f->localisation;
  f->culprit = c.node;
  f->culprit_rank = c.rank;
  if (!c.link.empty()) f->culprit_link = c.node + " " + c.link + " (" + c.link_rises + ")";
}

// Whether a live `culprit` event names the fault's element: its node, and
// its interface when the fault targets one and the culprit is a link — or
// the far end of the faulted cable (a switch port's fault seen at the node's
// link it faces).
bool NamesTheFault(const Event& e, const FaultStats& f,
                   const std::vector<InventorySwitch>& switches) {
  if (e.node == f.node) return e.link.empty() || f.target.empty() || e.link == f.target;
  if (e.link.empty() || f.target.empty()) return false;
  const auto far = FarEnd(switches, f.node, f.target);
  return far && far->first == e.node && far->second == e.link;
}

// The earliest apply of another fault after this one was reverted (or, when
// it never was, after it was applied): measurements of this fault stop there.
// APPLIES: every fault's (applied_at_s, index), sorted.
double NextFaultAfter(const std::vector<FaultStats>& faults,
                      const std::vector<std::pair<double, size_t>>& applies, size_t i) {
  const double after = faults[i].reverted_at_s.value_or(faults[i].applied_at_s);
  auto next = std::upper_bound(applies.begin(), applies.end(), std::pair{after, kNoIndex});
  if (next != applies.end() && next->second == i) ++next;  // not itself
  return next == applies.end() ? kInf : next->first;
}

void Measure(const std::vector<Iteration>& series, const std::vector<bool>& redone,
             const Baseline& baseline, int window_iters, double bound_s, FaultStats* f) {
  if (series.empty()) return;
  const double applied = f->applied_at_s;
  const double window_end = f->reverted_at_s.value_or(std::min(bound_s, series.back().end_s));

  // The job's throughput during the window: busbw of every iteration that
  // overlaps it, weighted by how much of the window it covers. A median of
  // the iterations that end inside the window would let one normal iteration
  // finishing just after a link went down stand for a 3 s stall (seen in a
  // quickstart drill: slowdown 1.05 with a 3354 ms stall).
  std::vector<const Iteration*> in = Overlapping(series, applied, window_end);
  // Against the baseline measured the same way (its time-weighted mean):
  // a median against a mean would read a few percent slow for a job the
  // fault never touched (seen: 1.03-1.05 for a tenant on another leaf).
  const std::optional<double> base =
      baseline.busbw_mean ? baseline.busbw_mean : baseline.busbw_median;
  if (auto rate = TimeWeightedBusbw(in, applied, window_end); rate && base)
    f->slowdown = *base / *rate;
  BreakDownRanks(in, f);

  if (baseline.band_low) {
    for (const Iteration& it : series) {
      if (it.end_s <= applied) continue;
      if (it.end_s > bound_s) break;
      if (it.busbw_gbps < *baseline.band_low) {
        f->time_to_impact_s = it.end_s - applied;
        break;
      }
    }
    if (f->reverted_at_s) {
      f->time_to_recover_s =
          TimeToRecover(series, *f->reverted_at_s, *baseline.band_low, window_iters, bound_s);
    }
  }

  const double stall_until = f->reverted_at_s && f->time_to_recover_s
                                 ? *f->reverted_at_s + *f->time_to_recover_s
                                 : bound_s;
  for (const Iteration* it : Overlapping(series, applied, stall_until)) {
    f->stall_ms = std::max(f->stall_ms.value_or(0), it->time_ms);
  }
  if (baseline.progress_gbps && std::isfinite(stall_until) && stall_until > applied) {
    const double progressed =
        Progress(series, redone, applied, stall_until) / *baseline.progress_gbps;
    int ranks = 0;
    for (const Iteration& it : series) ranks = std::max(ranks, static_cast<int>(it.ranks.size()));
    // Steps a relaunch redid after the job was back in band are this
    // fault's cost too (until the next fault).
    double redone_after = 0;
    for (size_t i = 0; i < series.size(); ++i) {
      if (!redone[i]) continue;
      const double overlap =
          std::min(series[i].end_s, bound_s) - std::max(series[i].start_s, stall_until);
      if (overlap > 0) redone_after += overlap;
    }
    f->lost_gpu_s = (std::max(0.0, (stall_until - applied) - progressed) + redone_after) * ranks;
  }
}

}  // namespace

void BreakDownRanks(const std::vector<const Iteration*>& in, FaultStats* f) {
  std::map<int, std::vector<double>> times, waits;
  std::map<int, std::string> nodes;
  for (const Iteration* it : in) {
    for (const RankSample& r : it->ranks) {
      times[r.rank].push_back(r.time_ms);
      waits[r.rank].push_back(r.wait_ms);
      nodes[r.rank] = r.node;
    }
  }
  for (auto& [rank, samples] : times) {
    f->ranks.push_back({.rank = rank,
                        .node = nodes[rank],
                        .time_ms_p50 = Median(std::move(samples)).value_or(0),
                        .wait_ms_p50 = Median(std::move(waits[rank])).value_or(0)});
  }
}

std::vector<bool> RedoneIterations(const std::vector<Iteration>& series) {
  // The highest step each launch completed; a later launch's step at or
  // below the highest of every launch before it is done again.
  std::map<int, int64_t> highest;
  for (const Iteration& it : series) {
    auto [at, fresh] = highest.emplace(it.attempt, it.iter);
    if (!fresh) at->second = std::max(at->second, it.iter);
  }
  std::vector<bool> out;
  out.reserve(series.size());
  for (const Iteration& it : series) {
    bool again = false;
    for (const auto& [attempt, top] : highest) {
      if (attempt >= it.attempt) break;
      again = again || it.iter <= top;
    }
    out.push_back(again);
  }
  return out;
}

double Progress(const std::vector<Iteration>& series, const std::vector<bool>& redone,
                double from_s, double to_s) {
  double work = 0;
  for (size_t i = 0; i < series.size(); ++i) {
    const Iteration& it = series[i];
    if (redone[i]) continue;
    const double overlap = std::min(it.end_s, to_s) - std::max(it.start_s, from_s);
    if (overlap > 0) work += overlap * it.busbw_gbps;
  }
  return work;
}

std::optional<double> TimeToRecover(const std::vector<Iteration>& series, double reverted_at_s,
                                    double band_low, int window_iters, double bound_s) {
  int good = 0;
  const Iteration* first = nullptr;
  for (const Iteration& it : series) {
    if (it.start_s < reverted_at_s) continue;
    if (it.end_s > bound_s) break;
    if (it.busbw_gbps < band_low) {
      good = 0;
      continue;
    }
    if (good++ == 0) first = &it;
    if (good >= window_iters) return std::max(0.0, first->start_s - reverted_at_s);
  }
  return std::nullopt;
}

std::vector<FaultStats> AnalyzeFaults(const std::vector<Event>& events,
                                      const std::vector<Iteration>& series,
                                      const Baseline& baseline, int recovery_window_iters,
                                      std::vector<std::string>* errors,
                                      const std::vector<InventorySwitch>& switches,
                                      std::vector<CompoundWindow>* compound) {
  const std::vector<bool> redone = RedoneIterations(series);
  const CounterIndex counters(events);
  std::vector<FaultStats> faults;
  std::map<std::string, const Event*> requested;  // fault_apply not yet confirmed
  // Per id, the faults applied and not yet reverted, oldest first: a revert
  // closes the latest.
  std::map<std::string, std::vector<size_t>> open;
  // Per id, its live `culprit` events; every failing exit; in the log's order.
  std::map<std::string, std::vector<const Event*>> culprits;
  std::vector<const Event*> failed_exits;
  for (const Event& e : events) {
    if (e.type == "fault_apply") {
      requested[e.id] = &e;
    } else if (e.type == "fault_applied") {
      requested.erase(e.id);
      faults.push_back({.id = e.id,
                        .kind = e.kind,
                        .node = e.node,
                        .target = e.target,
                        .scope = e.scope,
                        .applied_at_s = e.t});
      open[e.id].push_back(faults.size() - 1);
      if (e.verified == false) errors->push_back(Describe(faults.back()) + ": apply not verified");
    } else if (e.type == "fault_reverted") {
      auto ids = open.find(e.id);
      if (ids == open.end() || ids->second.empty()) {
        errors->push_back(
            fmt::format("fault_reverted at {:.3f} s for fault {}, never applied", e.t, e.id));
        continue;
      }
      FaultStats& f = faults[ids->second.back()];
      ids->second.pop_back();
      f.reverted_at_s = e.t;
      if (e.verified == false) errors->push_back(Describe(f) + ": revert not verified");
    } else if (e.type == "culprit") {
      culprits[e.id].push_back(&e);
    }
    if (JobFailedExit(e)) failed_exits.push_back(&e);
  }
  for (const auto& [id, e] : requested) {
    errors->push_back(
        fmt::format("fault {} ({} on {}): apply requested at {:.3f} s, never "
                    "confirmed",
                    id, e->kind, e->node, e->t));
  }
  std::vector<std::pair<double, size_t>> applies;
  for (size_t i = 0; i < faults.size(); ++i) applies.push_back({faults[i].applied_at_s, i});
  std::sort(applies.begin(), applies.end());
  std::vector<double> bounds;
  for (size_t i = 0; i < faults.size(); ++i) {
    FaultStats& f = faults[i];
    if (!f.reverted_at_s) {
      errors->push_back(Describe(f) + ": never reverted (no fault_reverted event)");
    }
    const double bound = NextFaultAfter(faults, applies, i);
    bounds.push_back(bound);
    Measure(series, redone, baseline, recovery_window_iters, bound, &f);
    LocaliseFault(counters, series, baseline, bound, switches, &f);
    if (auto named = culprits.find(f.id); named != culprits.end()) {
      for (const Event* e : named->second) {
        if (e->t >= f.applied_at_s && NamesTheFault(*e, f, switches)) {
          f.time_to_localise_s = e->t - f.applied_at_s;
          break;
        }
      }
    }
    for (const Event* e : failed_exits) {
      if (e->t >= f.applied_at_s) {
        f.job_failed_after_s = e->t - f.applied_at_s;
        break;
      }
    }
  }
  std::vector<CompoundWindow> windows = AttributeOverlaps(
      counters, series, baseline, recovery_window_iters, bounds, switches, &faults);
  if (compound != nullptr) *compound = std::move(windows);
  return faults;
}

}  // namespace fdrill

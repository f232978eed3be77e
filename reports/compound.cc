#include "reports/compound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "reports/analysis.h"
#include "reports/localise.h"

namespace fdrill {

std::vector<Span> Subtract(Span whole, const std::vector<Span>& cut) {
  std::vector<Span> sorted = cut;
  std::sort(sorted.begin(), sorted.end(),
            [](const Span& a, const Span& b) { return a.from_s < b.from_s; });
  std::vector<Span> out;
  double at = whole.from_s;
  for (const Span& c : sorted) {
    if (c.to_s <= at || c.from_s >= whole.to_s) continue;
    if (c.from_s > at) out.push_back({at, c.from_s});
    at = std::max(at, c.to_s);
  }
  if (at < whole.to_s) out.push_back({at, whole.to_s});
  return out;
}

std::optional<double> TimeWeightedBusbw(const std::vector<Iteration>& series,
                                        const std::vector<Span>& spans) {
  double covered = 0, weighted = 0;
  for (const Span& s : spans) {
    for (const Iteration* it : Overlapping(series, s.from_s, s.to_s)) {
      const double overlap = std::min(it->end_s, s.to_s) - std::max(it->start_s, s.from_s);
      if (overlap <= 0) continue;
      covered += overlap;
      weighted += overlap * it->busbw_gbps;
    }
  }
  if (covered <= 0 || weighted <= 0) return std::nullopt;
  return weighted / covered;
}

const char* EvidenceClass(const std::string& scope) {
  if (scope == "rank" || scope == "node") return "rank";
  if (scope.empty()) return "";
  return "link";
}

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr size_t kNoOwner = std::numeric_limits<size_t>::max();  // a compound window's second

// The longest iteration overlapping any of SPANS, in ms.
std::optional<double> StallOver(const std::vector<Iteration>& series,
                                const std::vector<Span>& spans) {
  std::optional<double> out;
  for (const Span& s : spans) {
    for (const Iteration* it : Overlapping(series, s.from_s, s.to_s))
      out = std::max(out.value_or(0), it->time_ms);
  }
  return out;
}

std::vector<const Iteration*> OverlappingAny(const std::vector<Iteration>& series,
                                             const std::vector<Span>& spans) {
  std::vector<const Iteration*> out;
  for (const Span& s : spans) {
    for (const Iteration* it : Overlapping(series, s.from_s, s.to_s)) out.push_back(it);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void SetCulprit(const Culprit& c, FaultStats* f) {
  f->localisation = c;
  f->culprit = c.node;
  f->culprit_rank = c.rank;
  f->culprit_link.reset();
  if (!c.link.empty()) f->culprit_link = c.node + " " + c.link + " (" + c.link_rises + ")";
}

// One set of faults in force together, and how every second of it is charged.
struct Group {
  std::vector<size_t> members;  // indices into faults, in apply order
  std::vector<Span> together;   // where two or more were in force
};

// The time each member was in force: applied to reverted, or to the end of
// the data for one never reverted.
Span InForce(const FaultStats& f, double data_end) {
  return {f.applied_at_s, f.reverted_at_s.value_or(std::max(data_end, f.applied_at_s))};
}

// Where two or more of SPANS overlap, merged, in order.
std::vector<Span> Together(const std::vector<Span>& spans) {
  std::vector<std::pair<double, int>> edges;
  for (const Span& s : spans) {
    edges.push_back({s.from_s, +1});
    edges.push_back({s.to_s, -1});
  }
  std::sort(edges.begin(), edges.end());  // an end before a start at the same t
  std::vector<Span> out;
  int depth = 0;
  double since = 0;
  for (const auto& [t, d] : edges) {
    const int before = depth;
    depth += d;
    if (before < 2 && depth >= 2) since = t;
    if (before >= 2 && depth < 2 && t > since) {
      if (!out.empty() && out.back().to_s >= since) {
        out.back().to_s = t;
      } else {
        out.push_back({since, t});
      }
    }
  }
  return out;
}

}  // namespace

std::vector<CompoundWindow> AttributeOverlaps(const CounterIndex& counters,
                                              const std::vector<Iteration>& series,
                                              const Baseline& baseline, int recovery_window_iters,
                                              const std::vector<double>& bounds,
                                              const std::vector<InventorySwitch>& switches,
                                              std::vector<FaultStats>* faults) {
  std::vector<CompoundWindow> out;
  std::vector<FaultStats>& fs = *faults;
  const double data_end = series.empty() ? 0 : series.back().end_s;
  std::vector<Span> in_force;
  for (const FaultStats& f : fs) in_force.push_back(InForce(f, data_end));

  // Groups: faults chained by overlapping in-force time, in apply order.
  std::vector<size_t> order(fs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return in_force[a].from_s < in_force[b].from_s; });
  std::vector<Group> groups;
  double group_end = -kInfinity;
  for (size_t i : order) {
    if (groups.empty() || !(in_force[i].from_s < group_end)) groups.push_back({});
    groups.back().members.push_back(i);
    group_end = std::max(group_end, in_force[i].to_s);
  }

  const std::optional<double> base =
      baseline.busbw_mean ? baseline.busbw_mean : baseline.busbw_median;
  const std::vector<bool> redone = RedoneIterations(series);
  int ranks = 0;
  for (const Iteration& it : series) ranks = std::max(ranks, static_cast<int>(it.ranks.size()));
  const LocaliseWindow ref{.ref_from_s = baseline.start_s, .ref_to_s = baseline.end_s};

  for (Group& g : groups) {
    if (g.members.size() < 2) continue;
    std::vector<Span> spans;
    for (size_t i : g.members) spans.push_back(in_force[i]);
    g.together = Together(spans);
    if (g.together.empty()) continue;  // touching, not overlapping
    CompoundWindow w;
    w.start_s = g.together.front().from_s;
    w.end_s = g.together.back().to_s;
    for (const Span& s : g.together) w.together_s += s.length();
    for (size_t i : g.members) w.faults.push_back(fs[i].id);
    if (auto rate = TimeWeightedBusbw(series, g.together); rate && base) w.slowdown = *base / *rate;
    w.stall_ms = StallOver(series, g.together);
    LocaliseWindow span = ref;
    span.from_s = w.start_s;
    span.to_s = w.end_s;
    const ClassCulprits by_class = LocaliseEachClass(counters, series, span, switches);
    if (by_class.link) w.culprits.push_back(*by_class.link);
    if (by_class.rank) w.culprits.push_back(*by_class.rank);

    // Each member: what overlapped it, its time alone, and what it is
    // measured over.
    std::map<std::string, int> compound_only;  // evidence class -> members never alone
    for (size_t i : g.members) {
      FaultStats& f = fs[i];
      std::vector<Span> others;
      for (size_t j : g.members) {
        if (j == i) continue;
        const Span& o = in_force[j];
        if (o.from_s < in_force[i].to_s && in_force[i].from_s < o.to_s) {
          others.push_back(o);
          f.overlapped_with.push_back(fs[j].id);
        }
        if (o.from_s <= f.applied_at_s && f.applied_at_s < o.to_s) f.applied_under_another = true;
        if (f.reverted_at_s && o.from_s < *f.reverted_at_s && *f.reverted_at_s < o.to_s)
          f.reverted_under_another = true;
      }
      const std::vector<Span> alone = Subtract(in_force[i], others);
      double total = 0, longest = 0;
      const Span* longest_span = nullptr;
      for (const Span& s : alone) {
        total += s.length();
        if (s.length() > longest) {
          longest = s.length();
          longest_span = &s;
        }
      }
      f.alone_s = total;
      if (f.applied_under_another) f.time_to_impact_s.reset();
      f.ranks.clear();
      if (longest >= kMinAloneS) {
        f.measured_over = "alone";
        f.slowdown.reset();
        if (auto rate = TimeWeightedBusbw(series, alone); rate && base) f.slowdown = *base / *rate;
        BreakDownRanks(OverlappingAny(series, alone), &f);
        LocaliseWindow lw = ref;
        lw.from_s = longest_span->from_s;
        lw.to_s = longest_span->to_s;
        const std::string cls = EvidenceClass(f.scope);
        // A link's counters sampled just after another fault's revert still
        // hold it; a rank's CPU time and line-up are its own.
        if (cls != "rank" && lw.from_s > f.applied_at_s && lw.to_s - lw.from_s > kCounterLagS)
          lw.from_s += kCounterLagS;
        f.localisation.reset();
        f.culprit.reset();
        f.culprit_rank.reset();
        f.culprit_link.reset();
        // Its own class of evidence: the other fault's leftovers (a packet
        // its revert dropped, a rank it stalled) are not this one's.
        if (cls.empty()) {
          if (auto c = Localise(counters, series, lw, switches)) SetCulprit(*c, &f);
        } else {
          const ClassCulprits own = LocaliseEachClass(counters, series, lw, switches);
          const std::optional<Culprit>& c = cls == "link" ? own.link : own.rank;
          if (c) SetCulprit(*c, &f);
        }
      } else {
        f.measured_over = "compound";
        f.slowdown = w.slowdown;
        BreakDownRanks(OverlappingAny(series, g.together), &f);
        ++compound_only[EvidenceClass(f.scope)];
      }
    }
    // A member never alone takes the culprit its class of evidence names in
    // the window, when it is the only such member of that class; else none
    // (the window's culprits stand, the evidence cannot say whose is whose).
    // So does a member whose seconds alone named nothing (two of a chain's
    // middle fault are few for a rank's CPU time), when it is the set's only
    // member of its class.
    std::map<std::string, int> of_class;
    for (size_t i : g.members) ++of_class[EvidenceClass(fs[i].scope)];
    for (size_t i : g.members) {
      FaultStats& f = fs[i];
      const std::string own_class = EvidenceClass(f.scope);
      if (f.measured_over == "alone" && !f.localisation && !own_class.empty() &&
          of_class[own_class] == 1) {
        const std::optional<Culprit>& c = own_class == "link" ? by_class.link : by_class.rank;
        if (c) SetCulprit(*c, &f);
        continue;
      }
      if (f.measured_over != "compound") continue;
      f.localisation.reset();
      f.culprit.reset();
      f.culprit_rank.reset();
      f.culprit_link.reset();
      const std::string cls = EvidenceClass(f.scope);
      if (cls.empty() || compound_only[cls] != 1) continue;
      const std::optional<Culprit>& c = cls == "link" ? by_class.link : by_class.rank;
      if (c) SetCulprit(*c, &f);
    }

    // Every second from the first apply to the job back in band after the
    // last revert, charged once: to the window where two or more were in
    // force, else to the one in force, else (a recovery) to the one
    // reverted last before it.
    size_t last = g.members.front();
    for (size_t i : g.members) {
      if (in_force[i].to_s >= in_force[last].to_s) last = i;
    }
    const double last_revert = in_force[last].to_s;
    double hold_end = bounds[last];
    bool all_reverted = true;
    for (size_t i : g.members) all_reverted = all_reverted && fs[i].reverted_at_s.has_value();
    if (all_reverted && baseline.band_low) {
      if (auto ttr = TimeToRecover(series, last_revert, *baseline.band_low, recovery_window_iters,
                                   bounds[last])) {
        hold_end = last_revert + *ttr;
      }
    }
    std::vector<double> edges = {hold_end};
    for (size_t i : g.members) {
      edges.push_back(in_force[i].from_s);
      edges.push_back(in_force[i].to_s);
    }
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    std::map<size_t, double> lost;
    std::map<size_t, std::vector<Span>> owned;
    double compound_lost = 0;
    const bool measurable = baseline.progress_gbps && std::isfinite(hold_end) && ranks > 0;
    for (size_t k = 0; k + 1 < edges.size(); ++k) {
      const Span seg{edges[k], edges[k + 1]};
      if (seg.from_s >= hold_end) break;
      std::vector<size_t> on;
      for (size_t i : g.members) {
        if (in_force[i].from_s <= seg.from_s && in_force[i].to_s >= seg.to_s) on.push_back(i);
      }
      size_t owner = kNoOwner;
      if (on.size() == 1) {
        owner = on.front();
      } else if (on.empty()) {
        double latest = -kInfinity;
        for (size_t i : g.members) {
          if (in_force[i].to_s <= seg.from_s && in_force[i].to_s >= latest) {
            latest = in_force[i].to_s;
            owner = i;
          }
        }
        if (owner == kNoOwner) continue;  // before the first apply: not the drill's
      }
      double seg_lost = 0;
      if (measurable) {
        const double progressed =
            Progress(series, redone, seg.from_s, seg.to_s) / *baseline.progress_gbps;
        seg_lost = std::max(0.0, seg.length() - progressed) * ranks;
      }
      if (owner == kNoOwner) {
        compound_lost += seg_lost;
      } else {
        lost[owner] += seg_lost;
        owned[owner].push_back(seg);
      }
    }
    // Steps a relaunch redid after the job was back in band: the cost of
    // the one reverted last, until the next fault.
    double redone_after = 0;
    if (measurable) {
      for (size_t i = 0; i < series.size(); ++i) {
        if (!redone[i]) continue;
        const double overlap =
            std::min(series[i].end_s, bounds[last]) - std::max(series[i].start_s, hold_end);
        if (overlap > 0) redone_after += overlap;
      }
    }
    for (size_t i : g.members) {
      FaultStats& f = fs[i];
      if (measurable) {
        f.lost_gpu_s = lost[i] + (i == last ? redone_after * ranks : 0);
      } else {
        f.lost_gpu_s.reset();
      }
      f.stall_ms = f.measured_over == "compound" ? w.stall_ms : StallOver(series, owned[i]);
    }
    if (measurable) w.lost_gpu_s = compound_lost;

    // How the window's lost GPU·s split between its faults.
    bool every_alone = true;
    double sum = 0;
    for (size_t i : g.members) {
      const FaultStats& f = fs[i];
      every_alone = every_alone && f.measured_over == "alone" && f.slowdown;
      if (f.measured_over == "alone" && f.slowdown) sum += std::max(0.0, 1 - 1 / *f.slowdown);
    }
    for (size_t i : g.members) w.shares.push_back({.fault = fs[i].id});
    if (every_alone && sum > 0) {
      w.share_basis = "alone";
      for (size_t k = 0; k < g.members.size(); ++k)
        w.shares[k].share = std::max(0.0, 1 - 1 / *fs[g.members[k]].slowdown) / sum;
    } else if (w.lost_gpu_s && *w.lost_gpu_s > 0 && w.together_s > 0) {
      // The rank's own evidence says how much of the window it held the
      // job up (its missing CPU time, or its peers' wait for it): that is
      // the rank fault's share when the window holds one rank fault and one
      // link fault; the link's has the rest.
      std::vector<size_t> rank_faults, link_faults;
      for (size_t i : g.members) {
        const std::string cls = EvidenceClass(fs[i].scope);
        if (cls == "rank") rank_faults.push_back(i);
        if (cls == "link") link_faults.push_back(i);
      }
      if (rank_faults.size() == 1 && link_faults.size() == 1 && g.members.size() == 2 &&
          by_class.rank_held) {
        const double lost_share = *w.lost_gpu_s / (ranks * w.together_s);
        const double r =
            lost_share > 0 ? std::clamp(*by_class.rank_held / lost_share, 0.0, 1.0) : 0;
        w.share_basis = "evidence";
        for (size_t k = 0; k < g.members.size(); ++k)
          w.shares[k].share = g.members[k] == rank_faults.front() ? r : 1 - r;
      }
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace fdrill

// CompareRuns: collect each metric per run, judge it. Rendering is in
// compare_report.cc.
#include "reports/compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "common/core/stats.h"
#include "reports/ab_stats.h"
#include "reports/analysis.h"
#include "reports/run_dir.h"
#include "reports/series.h"

namespace fdrill {

namespace {

constexpr char kWholeRun[] = "whole run";

using Key = std::tuple<std::string, int64_t>;  // op, bytes

// One phase's iterations: each one's busbw and seconds, in order.
struct Timed {
  std::vector<double> busbw;
  std::vector<double> seconds;
  void Add(const Iteration& it) {
    busbw.push_back(it.busbw_gbps);
    seconds.push_back(it.time_ms / 1000);
  }
  bool empty() const { return busbw.empty(); }
  // Work done over time: the time-weighted rate every slowdown of the
  // report is (reports/series.h), a stall counting for its length.
  std::optional<double> Rate() const {
    double work = 0, time = 0;
    for (size_t i = 0; i < busbw.size(); ++i) {
      work += busbw[i] * seconds[i];
      time += seconds[i];
    }
    if (!(time > 0)) return std::nullopt;
    return work / time;
  }
};

// Per (op, bytes) and phase name, every iteration that ended in the phase,
// in order (several phases of one name pool their iterations).
// `phase_order` receives the phase names in start order, each once.
using Samples = std::map<Key, std::map<std::string, Timed>>;

Samples Collect(const RunData& run, std::vector<std::string>* phase_order) {
  double run_end = 0;
  for (const Event& e : run.events) run_end = std::max(run_end, e.t);
  for (size_t i = 0; i < run.metrics.size(); ++i) run_end = std::max(run_end, run.metrics.t(i));
  const std::vector<PhaseStats> phases = AnalyzePhases(run.events, {}, run_end);
  auto note = [&](const std::string& name) {
    if (std::find(phase_order->begin(), phase_order->end(), name) == phase_order->end()) {
      phase_order->push_back(name);
    }
  };
  for (const PhaseStats& p : phases) note(p.name);
  if (phases.empty()) note(kWholeRun);

  std::map<Key, std::vector<uint32_t>> by_key;
  const MetricTable::Source* last = nullptr;  // a rank's records share theirs
  std::vector<uint32_t>* rows_of_last = nullptr;
  for (size_t i = 0; i < run.metrics.size(); ++i) {
    const MetricTable::Source& s = run.metrics.source(i);
    if (&s != last) {
      last = &s;
      rows_of_last = &by_key[{s.op, s.bytes}];
    }
    rows_of_last->push_back(static_cast<uint32_t>(i));
  }
  Samples out;
  for (const auto& [key, rows] : by_key) {
    const std::vector<Iteration> series = BuildIterations(run.metrics, rows);
    auto& per_phase = out[key];
    if (phases.empty()) {
      for (const Iteration& it : series) per_phase[kWholeRun].Add(it);
    }
    for (const PhaseStats& p : phases) {
      Timed& v = per_phase[p.name];
      for (const Iteration* it : EndingIn(series, p.start_s, p.end_s, false)) v.Add(*it);
    }
  }
  return out;
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// The verdict of a metric whose interval is `e`.
void Decide(CompareRow& row, const RatioInterval& e, const CompareOptions& o) {
  row.ratio = e.ratio;
  row.ci_low = e.low;
  row.ci_high = e.high;
  const double lo = 1 - row.threshold, hi = 1 + row.threshold;
  const bool below = e.high < lo;
  const bool above = e.low > hi;
  if (below || above) {
    if (row.better == Better::kNeither) {
      row.verdict = CompareVerdict::kChanged;
    } else {
      const bool worse = (row.better == Better::kHigher) == below;
      row.verdict = worse ? CompareVerdict::kRegression : CompareVerdict::kImprovement;
    }
  } else if (e.ratio >= lo && e.ratio <= hi) {
    // No change shown. When the interval still reaches past a threshold the
    // runs cannot rule such a change out: say how many would.
    row.verdict = CompareVerdict::kNoChange;
    if (e.low < lo || e.high > hi) {
      row.runs_needed = RunsNeeded(e, row.threshold, o.confidence);
      row.note = row.runs_needed
                     ? fmt::format(
                           "the interval reaches past ±{:g} %: {} a side would "
                           "rule such a change out",
                           row.threshold * 100, *row.runs_needed)
                     : fmt::format("the interval reaches past ±{:g} %", row.threshold * 100);
    }
  } else {
    // Past the threshold, but not surely.
    row.verdict = CompareVerdict::kNotEnoughRuns;
    row.runs_needed = RunsNeeded(e, row.threshold, o.confidence);
    if (!row.runs_needed) row.note = "the change sits on the threshold";
  }
}

// Fills the row's sample counts and means; false (the row decided: not
// compared) when a side has no value.
bool Measured(CompareRow& row, const std::vector<double>& a, const std::vector<double>& b) {
  row.n_a = static_cast<int>(a.size());
  row.n_b = static_cast<int>(b.size());
  if (!a.empty()) row.a = Mean(a);
  if (!b.empty()) row.b = Mean(b);
  if (!a.empty() && !b.empty()) return true;
  row.verdict = CompareVerdict::kNotCompared;
  row.note = fmt::format("not measured in {}", a.empty() && b.empty() ? "either"
                                               : a.empty()            ? "A"
                                                                      : "B");
  return false;
}

// The verdict of one metric from its samples a side (runs).
void Judge(CompareRow& row, const std::vector<double>& a, const std::vector<double>& b,
           const CompareOptions& o) {
  if (!Measured(row, a, b)) return;
  std::optional<RatioInterval> e = RatioOfMeans(a, b, o.confidence);
  if (!e) {
    if (a.size() < 2 && b.size() < 2) {
      row.verdict = CompareVerdict::kNotEnoughRuns;
      row.note =
          "one run a side shows no run-to-run spread: compare campaigns "
          "(fdrill campaign --repeat K)";
    } else {
      row.verdict = CompareVerdict::kNotCompared;
      row.note = "A is 0: no ratio";
    }
    return;
  }
  if (a.size() > 1 || b.size() > 1) row.spread = e->spread;
  Decide(row, *e, o);
}

// busbw with one run a side, from batch means of each run's iterations.
// Their interval knows the spread within each run, not between runs, and
// runs of one drill differ by more (bench/compare_calibration.sh: 7 % sd on
// the emulated fabric): without --run-spread the interval is shown and the
// verdict is "not enough runs". With it, each side's run-level error (that
// sd, on log values) widens the interval: se^2 = within^2 + 2 sd^2, normal
// quantile.
void JudgeSingleRuns(CompareRow& row, const Timed& iterations_a, const Timed& iterations_b,
                     const CompareOptions& o) {
  row.basis = o.run_spread > 0 ? "batches of iterations, --run-spread" : "batches of iterations";
  const std::vector<double> a = BatchMeans(iterations_a.busbw, o.batches, &iterations_a.seconds);
  const std::vector<double> b = BatchMeans(iterations_b.busbw, o.batches, &iterations_b.seconds);
  if (!Measured(row, a, b)) {
    if (!iterations_a.empty() && !iterations_b.empty())
      row.note = "fewer than 4 iterations on a side";
    return;
  }
  std::optional<RatioInterval> within = RatioOfMeans(a, b, o.confidence);
  if (!within) {
    row.verdict = CompareVerdict::kNotCompared;
    row.note = "no interval from the batches";
    return;
  }
  if (!(o.run_spread > 0)) {
    row.ratio = within->ratio;
    row.ci_low = within->low;
    row.ci_high = within->high;
    row.verdict = CompareVerdict::kNotEnoughRuns;
    row.note =
        "one run a side: the interval holds the spread within each run, not between runs; "
        "compare campaigns, or give --run-spread";
    return;
  }
  // The within-run half-width back to a standard error on its own scale.
  const double t = StudentT(0.5 + o.confidence / 2, within->df);
  auto scaled = [&](double r) { return within->log_scale ? std::log(r) : r - 1; };
  const double se_within = t > 0 ? (scaled(within->high) - scaled(within->ratio)) / t : 0;
  const double se = std::sqrt(se_within * se_within + 2 * o.run_spread * o.run_spread);
  const double z = StudentT(0.5 + o.confidence / 2, 1e6);
  RatioInterval e = *within;
  const double d = scaled(within->ratio);
  auto unscaled = [&](double x) { return within->log_scale ? std::exp(x) : 1 + x; };
  e.low = unscaled(d - z * se);
  e.high = unscaled(d + z * se);
  Decide(row, e, o);
  row.runs_needed.reset();  // a count of runs means nothing for one run a side
  if (row.verdict == CompareVerdict::kNoChange && !row.note.empty())
    row.note = fmt::format("the interval reaches past ±{:g} %", row.threshold * 100);
}

struct ComparedFaultMetric {
  const char* name;
  const char* unit;
  Better better;
  std::optional<double> FaultStats::*field;
};

constexpr ComparedFaultMetric kFaultMetrics[] = {
    {"slowdown", "x", Better::kLower, &FaultStats::slowdown},
    {"time to impact", "s", Better::kNeither, &FaultStats::time_to_impact_s},
    {"time to recover", "s", Better::kLower, &FaultStats::time_to_recover_s},
    {"stall", "ms", Better::kLower, &FaultStats::stall_ms},
    {"GPU·s lost", "GPU·s", Better::kLower, &FaultStats::lost_gpu_s},
};

}  // namespace

const char* CompareVerdictName(CompareVerdict verdict) {
  switch (verdict) {
    case CompareVerdict::kNoChange:
      return "no change";
    case CompareVerdict::kRegression:
      return "regression";
    case CompareVerdict::kImprovement:
      return "improvement";
    case CompareVerdict::kChanged:
      return "changed";
    case CompareVerdict::kNotEnoughRuns:
      return "not enough runs";
    case CompareVerdict::kNotCompared:
      return "not compared";
  }
  return "not compared";
}

Comparison CompareRuns(const std::vector<RunData>& a, const std::vector<RunData>& b,
                       const CompareOptions& options) {
  Comparison c;
  c.options = options;
  c.a.runs = static_cast<int>(a.size());
  c.b.runs = static_cast<int>(b.size());
  if (!a.empty()) c.a.name = a.front().plan.name;
  if (!b.empty()) c.b.name = b.front().plan.name;
  if (a.empty() || b.empty()) return c;
  if (c.a.name != c.b.name) {
    c.warnings.push_back(
        fmt::format("A ran scenario \"{}\" and B \"{}\": only what both measured is compared",
                    c.a.name, c.b.name));
  }
  c.fingerprinted = !a.front().fingerprint.empty() && !b.front().fingerprint.empty();
  if (c.fingerprinted)
    c.differences = DiffFingerprints(a.front().fingerprint, b.front().fingerprint);
  for (const auto& [side, runs] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
    for (size_t i = 1; i < runs->size(); ++i) {
      std::vector<FingerprintDifference> d =
          DiffFingerprints(runs->front().fingerprint, (*runs)[i].fingerprint);
      if (d.empty()) continue;
      c.warnings.push_back(
          fmt::format("{}'s run {} ran different software from its run 1 ({}: "
                      "{} → {}): its runs do not measure one thing",
                      side, i + 1, d.front().key, d.front().a, d.front().b));
      break;
    }
  }

  // busbw: per run its phases' time-weighted rates; one run a side,
  // time-weighted batch means.
  std::vector<std::string> phase_order;
  std::vector<Samples> sa, sb;
  for (const RunData& r : a) sa.push_back(Collect(r, &phase_order));
  for (const RunData& r : b) sb.push_back(Collect(r, &phase_order));
  std::vector<Key> keys;
  for (const auto* side : {&sa, &sb})
    for (const Samples& s : *side)
      for (const auto& [key, _] : s) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  const bool single = a.size() == 1 && b.size() == 1;
  auto series = [](const Samples& s, const Key& key, const std::string& phase) {
    static const Timed kEmpty;
    auto k = s.find(key);
    if (k == s.end()) return &kEmpty;
    auto p = k->second.find(phase);
    return p == k->second.end() ? &kEmpty : &p->second;
  };
  auto per_run = [&](const std::vector<Samples>& side, const Key& key, const std::string& phase) {
    std::vector<double> out;
    for (const Samples& s : side) {
      if (auto rate = series(s, key, phase)->Rate()) out.push_back(*rate);
    }
    return out;
  };
  for (const Key& key : keys) {
    for (const std::string& phase : phase_order) {
      CompareRow row;
      row.group = "busbw";
      row.op = std::get<0>(key);
      row.bytes = std::get<1>(key);
      row.phase = phase;
      row.metric = fmt::format("{} {} B {}", row.op, row.bytes, phase);
      row.unit = "GB/s";
      row.better = Better::kHigher;
      row.threshold = options.threshold;
      if (single) {
        const Timed& ia = *series(sa[0], key, phase);
        const Timed& ib = *series(sb[0], key, phase);
        if (ia.empty() && ib.empty()) continue;
        JudgeSingleRuns(row, ia, ib, options);
      } else {
        row.basis = "runs";
        const std::vector<double> va = per_run(sa, key, phase), vb = per_run(sb, key, phase);
        if (va.empty() && vb.empty()) continue;
        Judge(row, va, vb, options);
      }
      c.rows.push_back(std::move(row));
    }
  }

  // Faults, by id in A's order (then B's own), each metric over the runs.
  std::vector<Summary> sum_a, sum_b;
  for (const RunData& r : a) sum_a.push_back(Analyze(r));
  for (const RunData& r : b) sum_b.push_back(Analyze(r));
  std::vector<std::string> fault_ids;
  for (const auto* side : {&sum_a, &sum_b})
    for (const Summary& s : *side)
      for (const FaultStats& f : s.faults)
        if (std::find(fault_ids.begin(), fault_ids.end(), f.id) == fault_ids.end())
          fault_ids.push_back(f.id);
  auto values = [](const std::vector<Summary>& side, const std::string& id,
                   std::optional<double> FaultStats::*field) {
    std::vector<double> out;
    for (const Summary& s : side)
      for (const FaultStats& f : s.faults)
        if (f.id == id && f.*field) out.push_back(*(f.*field));
    return out;
  };
  for (const std::string& id : fault_ids) {
    for (const ComparedFaultMetric& m : kFaultMetrics) {
      std::vector<double> va = values(sum_a, id, m.field), vb = values(sum_b, id, m.field);
      if (va.empty() && vb.empty()) continue;
      CompareRow row;
      row.group = id;
      row.metric = m.name;
      row.unit = m.unit;
      row.better = m.better;
      row.basis = "runs";
      row.threshold = options.time_threshold;
      Judge(row, va, vb, options);
      c.rows.push_back(std::move(row));
    }
  }
  bool restarted = false;
  for (const auto* side : {&sum_a, &sum_b})
    for (const Summary& s : *side) restarted = restarted || s.rollback.restarts > 0;
  if (restarted) {
    auto redone = [](const std::vector<Summary>& side) {
      std::vector<double> out;
      for (const Summary& s : side) out.push_back(static_cast<double>(s.rollback.iterations_lost));
      return out;
    };
    CompareRow row;
    row.group = "restarts";
    row.metric = "iterations redone";
    row.unit = "steps";
    row.better = Better::kLower;
    row.basis = "runs";
    row.threshold = options.time_threshold;
    Judge(row, redone(sum_a), redone(sum_b), options);
    c.rows.push_back(std::move(row));
  }

  const auto any = [&](CompareVerdict v) {
    return std::any_of(c.rows.begin(), c.rows.end(),
                       [v](const CompareRow& r) { return r.verdict == v; });
  };
  c.overall = any(CompareVerdict::kRegression)    ? CompareVerdict::kRegression
              : any(CompareVerdict::kImprovement) ? CompareVerdict::kImprovement
              : any(CompareVerdict::kNoChange) || any(CompareVerdict::kChanged)
                  ? CompareVerdict::kNoChange
              : any(CompareVerdict::kNotEnoughRuns) ? CompareVerdict::kNotEnoughRuns
                                                    : CompareVerdict::kNotCompared;
  return c;
}

Result<std::vector<RunData>> LoadCompareSide(const std::string& dir, CompareSide* side) {
  side->dir = dir;
  Result<std::optional<std::vector<std::string>>> campaign = CampaignRunDirs(dir);
  if (!campaign.ok()) return campaign.status();
  side->campaign = campaign->has_value();
  const std::vector<std::string> run_dirs = campaign->value_or(std::vector<std::string>{dir});
  if (side->campaign && run_dirs.empty()) {
    return FailedPrecondition(fmt::format(
        "{}: the campaign holds no finished run (campaign.json lists none with exit 0 or 1)", dir));
  }
  std::vector<RunData> runs;
  for (const std::string& d : run_dirs) {
    Result<RunData> r = LoadRunDir(d);
    if (!r.ok()) return r.status();
    if (r->metrics.empty())
      return FailedPrecondition(fmt::format("{}: no metrics record to compare", d));
    runs.push_back(std::move(*r));
  }
  side->runs = static_cast<int>(runs.size());
  if (!runs.empty()) side->name = runs.front().plan.name;
  return runs;
}

Result<Comparison> CompareRunDirs(const std::string& a_dir, const std::string& b_dir,
                                  const CompareOptions& options) {
  CompareSide sa, sb;
  Result<std::vector<RunData>> a = LoadCompareSide(a_dir, &sa);
  if (!a.ok()) return a.status();
  Result<std::vector<RunData>> b = LoadCompareSide(b_dir, &sb);
  if (!b.ok()) return b.status();
  Comparison c = CompareRuns(*a, *b, options);
  c.a = sa;
  c.b = sb;
  return c;
}

int ExitCodeForComparison(const Comparison& comparison) {
  switch (comparison.overall) {
    case CompareVerdict::kRegression:
      return 1;
    case CompareVerdict::kNoChange:
    case CompareVerdict::kImprovement:
    case CompareVerdict::kChanged:
      return 0;
    case CompareVerdict::kNotEnoughRuns:
    case CompareVerdict::kNotCompared:
      return 2;
  }
  return 2;
}

Result<double> ParseThreshold(std::string_view text) {
  std::string_view number = text;
  const bool percent = !number.empty() && number.back() == '%';
  if (percent) number.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size()) {
    return InvalidArgument(fmt::format("threshold \"{}\" is not a number like 3% or 0.03", text));
  }
  if (percent) value /= 100;
  if (!(value >= 0 && value < 1)) {
    return InvalidArgument(
        fmt::format("threshold \"{}\" must lie in [0 %, 100 %) (write 3% or 0.03)", text));
  }
  return value;
}

}  // namespace fdrill

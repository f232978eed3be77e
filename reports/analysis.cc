// Analyze() and the timeline pieces: phases and the baseline band. Faults are
// in fault_analysis.cc; rollback, expectations and the verdict in verdict.cc.
#include "reports/analysis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "common/core/stats.h"
#include "reports/agent_loss.h"
#include "reports/detectors.h"
#include "reports/job_outcome.h"
#include "reports/link_stats.h"
#include "reports/slurm_changes.h"

namespace fdrill {

namespace {

// 1.4826 × MAD estimates the standard deviation of normal data.
constexpr double kMadToSigma = 1.4826;

double RunEnd(const RunData& run, const std::vector<Iteration>& series) {
  double end = 0;
  for (const Event& e : run.events) end = std::max(end, e.t);
  for (const Iteration& it : series) end = std::max(end, it.end_s);
  return end;
}

std::optional<double> FirstFaultAt(const std::vector<Event>& events) {
  for (const Event& e : events) {
    if (e.type == "fault_applied") return e.t;
  }
  return std::nullopt;
}

const std::vector<ResidueItem>* LastResidue(const std::vector<Event>& events) {
  const std::vector<ResidueItem>* items = nullptr;
  for (const Event& e : events) {
    if (e.type == "residue") items = &e.items;
  }
  return items;
}

}  // namespace

std::vector<PhaseStats> AnalyzePhases(const std::vector<Event>& events,
                                      const std::vector<Iteration>& series, double run_end_s) {
  std::vector<PhaseStats> phases;
  std::vector<size_t> open;  // indexes into phases, oldest first
  for (const Event& e : events) {
    if (e.type == "phase_start") {
      phases.push_back({.name = e.phase, .start_s = e.t, .end_s = run_end_s});
      open.push_back(phases.size() - 1);
    } else if (e.type == "phase_end") {
      auto it = std::find_if(open.rbegin(), open.rend(),
                             [&](size_t i) { return phases[i].name == e.phase; });
      if (it == open.rend()) continue;  // an end without a start says nothing
      phases[*it].end_s = e.t;
      open.erase(std::next(it).base());
    }
  }
  std::stable_sort(phases.begin(), phases.end(),
                   [](const PhaseStats& a, const PhaseStats& b) { return a.start_s < b.start_s; });
  for (PhaseStats& p : phases) {
    std::vector<const Iteration*> in = EndingIn(series, p.start_s, p.end_s, false);
    p.count = static_cast<int>(in.size());
    std::vector<double> times = TimeMsOf(in);
    p.iter_ms_p50 = Percentile(times, 50);
    p.iter_ms_p99 = Percentile(times, 99);
    p.busbw_gbps_p50 = Median(BusbwOf(in));
    p.busbw_gbps_mean =
        TimeWeightedBusbw(Overlapping(series, p.start_s, p.end_s), p.start_s, p.end_s);
  }
  return phases;
}

Baseline ComputeBaseline(const std::vector<PhaseStats>& phases,
                         const std::vector<Iteration>& series,
                         std::optional<double> first_fault_at_s, const AnalysisOptions& options) {
  Baseline b;
  std::vector<const Iteration*> in;
  auto named = std::find_if(phases.begin(), phases.end(),
                            [](const PhaseStats& p) { return p.name == "baseline"; });
  b.learned = named == phases.end();
  if (named == phases.end() && !phases.empty()) named = phases.begin();
  if (named != phases.end()) {
    b.phase = named->name;
    in = EndingIn(series, named->start_s, named->end_s, false);
  } else if (first_fault_at_s) {
    b.phase = "before the first fault";
    in = EndingIn(series, -std::numeric_limits<double>::infinity(), *first_fault_at_s, false);
  } else {
    b.phase = "whole run";
    in = EndingIn(series, -std::numeric_limits<double>::infinity(),
                  std::numeric_limits<double>::infinity(), false);
  }
  b.count = static_cast<int>(in.size());
  if (!in.empty()) {
    b.start_s = in.front()->start_s;
    b.end_s = in.back()->end_s;
  }
  std::vector<double> busbw = BusbwOf(in);
  b.busbw_median = Median(busbw);
  double time = 0, weighted = 0;
  for (const Iteration* it : in) {
    const double d = it->end_s - it->start_s;
    if (d <= 0) continue;
    time += d;
    weighted += d * it->busbw_gbps;
  }
  if (time > 0 && weighted > 0) b.busbw_mean = weighted / time;
  if (!in.empty() && weighted > 0) {
    const double span = in.back()->end_s - in.front()->start_s;
    if (span > 0) b.progress_gbps = weighted / span;
  }
  b.mad = MedianAbsoluteDeviation(busbw);
  if (b.busbw_median && b.mad) b.band_low = BandLow(*b.busbw_median, *b.mad, options);
  if (b.learned && b.band_low) {
    // The reference is the healthy rate: what fell below the band in a
    // learned baseline is what the drill is looking for, not the baseline.
    double healthy_time = 0, healthy = 0, healthy_span = 0;
    for (const Iteration* it : in) {
      const double d = it->end_s - it->start_s;
      if (d <= 0 || it->busbw_gbps < *b.band_low) continue;
      healthy_time += d;
      healthy += d * it->busbw_gbps;
    }
    if (healthy_time > 0 && healthy > 0) b.busbw_mean = healthy / healthy_time;
    // The wall-clock rate keeps the gaps between iterations: scaled by the
    // healthy share of the time the iterations took.
    if (time > 0 && b.progress_gbps && healthy_time > 0) {
      healthy_span = (in.back()->end_s - in.front()->start_s) * healthy_time / time;
      if (healthy_span > 0) b.progress_gbps = healthy / healthy_span;
    }
  }
  return b;
}

double BandLow(double median, double mad, const AnalysisOptions& options) {
  // A noisy baseline (a shared, oversubscribed machine) must not widen the
  // band past usefulness: below zero nothing would ever count as impact.
  const double width =
      std::min(std::max(options.band_k * kMadToSigma * mad, options.band_floor_fraction * median),
               options.band_cap_fraction * median);
  return median - width;
}

double CounterIncrease(const std::vector<std::pair<double, double>>& series, double from_s,
                       double to_s) {
  double rise = 0;
  const std::pair<double, double>* prev = nullptr;
  for (const auto& sample : series) {
    if (sample.first > to_s) break;
    if (prev != nullptr && sample.first > from_s) {
      // A counter that went down was reset (a qdisc replaced, a port reset):
      // what it holds now is what it counted since.
      rise += sample.second >= prev->second ? sample.second - prev->second : sample.second;
    }
    prev = &sample;
  }
  return rise;
}

std::vector<CounterDelta> CounterDeltas(const std::vector<Event>& events,
                                        const std::vector<PhaseStats>& phases) {
  // (node, counter) -> samples (t, value), in timeline order.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, double>>> samples;
  for (const Event& e : events) {
    if (e.type != "counters") continue;
    for (const auto& [name, value] : e.counters) samples[{e.node, name}].push_back({e.t, value});
  }
  std::vector<CounterDelta> out;
  for (const PhaseStats& p : phases) {
    for (const auto& [key, series] : samples) {
      // From the last sample at or before the phase's start (or, when none,
      // the first inside it) to the last at or before its end.
      const bool inside = std::any_of(series.begin(), series.end(), [&](const auto& x) {
        return x.first >= p.start_s && x.first <= p.end_s;
      });
      if (!inside) continue;
      double from = p.start_s;
      if (series.front().first > p.start_s) from = series.front().first;
      out.push_back({.phase = p.name,
                     .node = key.first,
                     .counter = key.second,
                     .delta = CounterIncrease(series, from, p.end_s)});
    }
  }
  return out;
}

namespace {

// Each phase's slowdown against the baseline, as a fault's is measured:
// the baseline's time-weighted mean over the phase's (a stall counts for
// its length; the median over iterations once read 1.0 through a 10 s
// stall of 175 ms iterations, and 1.24x where the fault read 210x).
void SetPhaseSlowdowns(const Baseline& baseline, std::vector<PhaseStats>* phases) {
  const std::optional<double> base =
      baseline.busbw_mean ? baseline.busbw_mean : baseline.busbw_median;
  for (PhaseStats& p : *phases) {
    if (base && p.busbw_gbps_mean && *p.busbw_gbps_mean > 0)
      p.slowdown = *base / *p.busbw_gbps_mean;
  }
}

// Each tenant on its own: its iterations, phases and baseline, and what
// every fault did to it (the same definitions as the top level), into
// summary->workloads and each fault's workloads[]. The faults' own problems
// (an apply never confirmed) are the top level's errors already.
void AnalyzeTenants(const RunData& run, const AnalysisOptions& options, int window, Summary* s) {
  for (const PlanWorkload& w : run.plan.workloads) {
    const std::vector<Iteration> series =
        BuildIterations(run.metrics, RecordsOfWorkload(run.metrics, w.name));
    const std::vector<PhaseStats> phases = AnalyzePhases(run.events, series, RunEnd(run, series));
    WorkloadStats stats{.name = w.name, .nodes = w.nodes, .ranks = w.ranks, .start = w.start};
    stats.baseline = ComputeBaseline(phases, series, FirstFaultAt(run.events), options);
    stats.phases = phases;
    SetPhaseSlowdowns(stats.baseline, &stats.phases);
    // A tenant that arrived mid-drill has no baseline: its phases show its
    // busbw, the faults' effect on it is not measured.
    if (w.start.empty() && !series.empty() && stats.baseline.count == 0) {
      s->errors.push_back("workload " + w.name + ": the baseline (" + stats.baseline.phase +
                          ") holds no iteration: its slowdown and recovery cannot be measured");
    }
    std::vector<std::string> ignored;
    const std::vector<FaultStats> felt =
        AnalyzeFaults(run.events, series, stats.baseline, window, &ignored, run.switches);
    for (size_t i = 0; i < felt.size() && i < s->faults.size(); ++i) {
      s->faults[i].workloads.push_back({.workload = w.name,
                                        .slowdown = felt[i].slowdown,
                                        .time_to_impact_s = felt[i].time_to_impact_s,
                                        .time_to_recover_s = felt[i].time_to_recover_s,
                                        .stall_ms = felt[i].stall_ms});
    }
    s->workloads.push_back(std::move(stats));
  }
}

}  // namespace

Summary Analyze(const RunData& run, const AnalysisOptions& options) {
  Summary s;
  s.name = run.plan.name;
  for (const Event& e : run.events) {
    if (s.name.empty() && e.type == "drill_start") s.name = e.name;
  }
  s.errors = run.load_notes;
  const std::vector<std::string> harness_errors = HarnessErrors(run);
  s.errors.insert(s.errors.end(), harness_errors.begin(), harness_errors.end());

  // With tenants, ranks are numbered per workload: the top level is the
  // first workload's, each one's effect is AnalyzeTenants'.
  const std::vector<Iteration> series =
      run.plan.workloads.empty()
          ? BuildIterations(run.metrics)
          : BuildIterations(run.metrics,
                            RecordsOfWorkload(run.metrics, run.plan.workloads.front().name));
  s.rate_unit = run.plan.rate_unit;
  s.phases = AnalyzePhases(run.events, series, RunEnd(run, series));
  s.baseline = ComputeBaseline(s.phases, series, FirstFaultAt(run.events), options);
  SetPhaseSlowdowns(s.baseline, &s.phases);
  if (!series.empty() && s.baseline.count == 0) {
    s.errors.push_back("the baseline (" + s.baseline.phase +
                       ") holds no iteration: slowdown and recovery cannot be measured");
  }
  const int window = options.recovery_window_iters.value_or(run.plan.recovery_window_iters);
  s.faults =
      AnalyzeFaults(run.events, series, s.baseline, window, &s.errors, run.switches, &s.compound);
  for (const FaultStats& f : s.faults) {
    if (f.lost_gpu_s) s.lost_gpu_s = s.lost_gpu_s.value_or(0) + *f.lost_gpu_s;
  }
  for (const CompoundWindow& w : s.compound) {
    if (w.lost_gpu_s) s.lost_gpu_s = s.lost_gpu_s.value_or(0) + *w.lost_gpu_s;
  }
  s.anomalies = FindAnomalies(run.events, series, s.baseline, s.faults, run.switches);
  AddDetectors(run.events, &s.faults);
  AddJobOutcomes(run.events, series, run.plan.predicted_job, &s.faults);
  if (s.baseline.progress_gbps && !series.empty()) {
    double from = -std::numeric_limits<double>::infinity();
    for (const PhaseStats& p : s.phases) {
      if (p.name == s.baseline.phase) from = p.end_s;
    }
    const double to = series.back().end_s;
    if (std::isfinite(from) && to > from) {
      s.ettr = Progress(series, RedoneIterations(series), from, to) / *s.baseline.progress_gbps /
               (to - from);
    }
  }
  AnalyzeTenants(run, options, window, &s);
  s.rollback = AnalyzeRollback(run, &s.errors);
  s.rollback.failures = AnalyzeFailures(run.events, series, s.baseline, window);
  s.counters = CounterDeltas(run.events, s.phases);
  {
    const CounterIndex index(run.events);
    s.links = AnalyzeLinks(index, s.phases, run.switches);
    s.transport = AnalyzeTransport(index, s.phases);
  }

  s.agents_lost = AnalyzeAgentLosses(run.events);
  s.slurm = AnalyzeSlurm(run.events);
  if (const std::vector<ResidueItem>* items = LastResidue(run.events)) {
    s.residue_checked = true;
    s.residue = *items;
  } else {
    s.errors.push_back("the residue check did not run: events.jsonl has no residue event");
  }

  s.expectations = EvaluateExpectations(run.plan.expectations, s);
  // A job that failed fails the drill whatever the scenario expected: the
  // reason is the workload's exit (and the fault before it, job_failed_after_s).
  // A restart policy may bring it back: a failing exit followed by a
  // workload_restart was recovered from (RecoveredByRestart).
  bool unrecovered = false;
  for (size_t i = 0; i < run.events.size(); ++i) {
    const Event& e = run.events[i];
    unrecovered |= JobFailedExit(e) && !RecoveredByRestart(run.events, i);
  }
  if (unrecovered) {
    s.expectations.push_back(
        {.name = "job_completed", .limit = true, .measured = false, .pass = false});
  }
  for (const Event& e : run.events) {
    if (e.type != "abort") continue;
    // The job's end (a crash, restarts exhausted), a stop condition or a
    // gate's timeout: an outcome, with its reason in `stopped`.
    if (e.cause == "job" || e.cause == "stop_condition" || e.cause == "gate") s.stopped = e.reason;
    if (e.cause == "stop_condition" || e.cause == "gate") {
      s.expectations.push_back(
          {.name = "timeline_completed", .limit = true, .measured = false, .pass = false});
    }
    break;
  }
  s.verdict = DecideVerdict(harness_errors, s.expectations);
  return s;
}

}  // namespace fdrill

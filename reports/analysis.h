// The analysis of one run: pure functions from RunData (and the iteration
// series built from it) to a Summary. No I/O, no clocks, no globals; every
// definition is written out in reports/README.md and in the comment of the
// function that computes it. Analyze() is the whole; the pieces are public so
// tests can pin each definition on hand-built inputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/run_data.h"
#include "reports/series.h"
#include "reports/summary.h"

namespace fdrill {

struct AnalysisOptions {
  // Baseline band: low = median - min(max(band_k × 1.4826 × MAD,
  // band_floor_fraction × median), band_cap_fraction × median).
  double band_k = 4.0;
  double band_floor_fraction = 0.10;
  double band_cap_fraction = 0.50;
  // Overrides plan.json's recovery_window_iters when set.
  std::optional<int> recovery_window_iters;
};

Summary Analyze(const RunData& run, const AnalysisOptions& options = {});

// Phases from phase_start/phase_end events, in start order; a phase_end pairs
// with the latest open phase_start of the same name; a phase never ended ends
// at run_end_s. Each phase's statistics use the iterations whose end lies in
// [start, end).
std::vector<PhaseStats> AnalyzePhases(const std::vector<Event>& events,
                                      const std::vector<Iteration>& series, double run_end_s);

// The baseline is measured on the phase named "baseline", else the first
// phase, else (no phases) the iterations that ended before the first fault was
// applied, else all iterations.
Baseline ComputeBaseline(const std::vector<PhaseStats>& phases,
                         const std::vector<Iteration>& series,
                         std::optional<double> first_fault_at_s, const AnalysisOptions& options);

// The baseline band's low edge for a busbw median and MAD (the formula in
// AnalysisOptions). The controller's live monitor uses it too.
double BandLow(double median, double mad, const AnalysisOptions& options = {});

// One FaultStats per fault_applied event, in timeline order; a fault_reverted
// pairs with the latest unreverted application of its id. Faults in force
// together are measured as reports/compound.h says, their compound windows
// in *COMPOUND when given. Problems (an apply
// never confirmed, a fault never reverted) are appended to *errors.
// SWITCHES (inventory.json's cabling; empty on a real cluster): a live
// culprit at either end of a faulted cable names the fault.
std::vector<FaultStats> AnalyzeFaults(const std::vector<Event>& events,
                                      const std::vector<Iteration>& series,
                                      const Baseline& baseline, int recovery_window_iters,
                                      std::vector<std::string>* errors,
                                      const std::vector<InventorySwitch>& switches = {},
                                      std::vector<CompoundWindow>* compound = nullptr);

// Per rank, the medians of time_ms and wait_ms over IN, appended to
// f->ranks by rank.
void BreakDownRanks(const std::vector<const Iteration*>& in, FaultStats* f);

// Which iterations redo a step an earlier launch of the job completed (a
// relaunch resuming from its checkpoint): aligned with SERIES.
std::vector<bool> RedoneIterations(const std::vector<Iteration>& series);

// The work the job did in [from_s, to_s), in GB of busbw-seconds: each
// iteration's busbw x the part of it inside the interval; redone ones
// (RedoneIterations) are not progress. Over a Baseline's progress_gbps it is
// the wall time the job would have needed at its baseline rate.
double Progress(const std::vector<Iteration>& series, const std::vector<bool>& redone,
                double from_s, double to_s);

// The first W consecutive iterations that all start at or after reverted_at_s,
// end by bound_s and have busbw >= band_low: their first start minus
// reverted_at_s (>= 0). std::nullopt when there is no such window.
std::optional<double> TimeToRecover(const std::vector<Iteration>& series, double reverted_at_s,
                                    double band_low, int window_iters, double bound_s);

// How much one cumulative counter rose over (from_s, to_s]: the sum of the
// rises between consecutive samples, from the last sample at or before
// from_s to the last at or before to_s. A sample below the one before is a
// reset (a qdisc replaced, a port reset): it counts as its own value, never
// as a negative rise. SERIES is (t, value) in time order.
double CounterIncrease(const std::vector<std::pair<double, double>>& series, double from_s,
                       double to_s);

// Per phase, node and counter: CounterIncrease from the last sample at or
// before the phase's start (or, when none, the first sample inside it) to
// the last at or before its end. Only counters sampled inside [start, end]
// are reported. In phase order, then node, then counter name.
std::vector<CounterDelta> CounterDeltas(const std::vector<Event>& events,
                                        const std::vector<PhaseStats>& phases);

// Anomalies: maximal runs of consecutive iterations after the baseline (and,
// when the baseline was learned from a phase of the drill's own — no phase
// named baseline — inside it, against a rolling band), of
// one launch of the job, each below the baseline band and none overlapping
// what a scheduled fault explains (its apply - 0.5 s to its recovery + 1 s,
// or to the next fault's apply when it never recovered) or a restart (its
// failure to kAnomalyRestartGraceS after the relaunch), lasting at least
// kAnomalyMinIterations iterations and kAnomalyMinSeconds, for which
// Localise names an element (against the baseline's span). A dip nothing
// can be named for is the shared machine's noise, not an anomaly.
constexpr int kAnomalyMinIterations = 10;
constexpr double kAnomalyMinSeconds = 2.0;
constexpr double kAnomalyRestartGraceS = 15.0;
std::vector<Anomaly> FindAnomalies(const std::vector<Event>& events,
                                   const std::vector<Iteration>& series, const Baseline& baseline,
                                   const std::vector<FaultStats>& faults,
                                   const std::vector<InventorySwitch>& switches = {});

// Whether E is the job failing: a workload_exit with a non-zero code that
// the drill did not cause. `forced` exits are the drill stopping a job at its
// end (SIGTERM to a launcher that runs until stopped: 143), never a failure.
bool JobFailedExit(const Event& e);

// Whether events[i], a failing workload_exit, was recovered from: a
// workload_restart (the restart policy's relaunch reporting) follows it.
bool RecoveredByRestart(const std::vector<Event>& events, size_t i);

// restarts, iterations lost, data integrity; reasons for a broken data check
// are appended to *errors.
Rollback AnalyzeRollback(const RunData& run, std::vector<std::string>* errors);

// One RestartStats per workload_failed event, in order: the fault applied
// last before it (time_to_detect_s from that apply), the workload_restart
// after it (time_to_restart_s, resumed_step, iterations_lost) and the time
// from that restart to the first `window_iters` iterations of the new
// attempt back in the band (back_in_band_s). Definitions: README.md.
std::vector<RestartStats> AnalyzeFailures(const std::vector<Event>& events,
                                          const std::vector<Iteration>& series,
                                          const Baseline& baseline, int window_iters);

// Every expectation plan.json sets, each with its limit and measurement.
std::vector<ExpectationResult> EvaluateExpectations(const Expectations& expected,
                                                    const Summary& summary);

// Why the harness itself failed (drill_end missing, aborted or error; error
// events; no metrics), in timeline order. Empty when the drill ran.
std::vector<std::string> HarnessErrors(const RunData& run);

// error when there are harness errors (HarnessErrors); else fail when an
// expectation failed; else pass.
Verdict DecideVerdict(const std::vector<std::string>& harness_errors,
                      const std::vector<ExpectationResult>& expectations);

}  // namespace fdrill

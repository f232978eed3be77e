// Rollback, expectations and the verdict: what the run is judged on.
// Definitions: reports/README.md.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "common/core/fault_ref.h"
#include "reports/analysis.h"
#include "reports/digest.h"
#include "reports/job_outcome.h"

namespace fdrill {

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
    case Verdict::kError:
      return "error";
  }
  return "error";
}

int ExitCodeForVerdict(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return 0;
    case Verdict::kFail:
      return 1;
    case Verdict::kError:
      return 2;
  }
  return 2;
}

double StretchEnd(const std::vector<FaultStats>& faults, const FaultStats& f) {
  double end = std::numeric_limits<double>::infinity();
  for (const FaultStats& other : faults) {
    if (other.applied_at_s > f.applied_at_s) end = std::min(end, other.applied_at_s);
  }
  return end;
}

namespace {

std::string Where(const std::string& node) { return node.empty() ? "" : node + ": "; }

// The per-fault metrics an expectation may name (common/core/
// expectable_metrics.h lists them all).
std::optional<double> FaultMetric(const std::string& name, const FaultStats& f) {
  if (name == "slowdown") return f.slowdown;
  if (name == "time_to_impact_s") return f.time_to_impact_s;
  if (name == "time_to_recover_s") return f.time_to_recover_s;
  if (name == "stall_ms") return f.stall_ms;
  if (name == "job_failed_after_s") return f.job_failed_after_s;
  if (name == "lost_gpu_s") return f.lost_gpu_s;
  return std::nullopt;
}

std::optional<double> RunMetric(const std::string& name, const Summary& s) {
  if (name == "baseline.busbw_median") return s.baseline.busbw_median;
  if (name == "rollback.restarts") return s.rollback.restarts;
  if (name == "rollback.iterations_lost") return static_cast<double>(s.rollback.iterations_lost);
  if (name == "rollback.wrong_elements") return static_cast<double>(s.rollback.wrong_elements);
  if (name == "residue.count") {
    if (!s.residue_checked) return std::nullopt;
    return static_cast<double>(s.residue.size());
  }
  return std::nullopt;
}

}  // namespace

bool JobFailedExit(const Event& e) {
  return e.type == "workload_exit" && e.exit_code.value_or(0) != 0 && !e.forced.value_or(false);
}

bool RecoveredByRestart(const std::vector<Event>& events, size_t i) {
  return std::any_of(events.begin() + static_cast<std::ptrdiff_t>(i) + 1, events.end(),
                     [](const Event& x) { return x.type == "workload_restart"; });
}

Rollback AnalyzeRollback(const RunData& run, std::vector<std::string>* errors) {
  Rollback r;
  const auto& wrong = run.metrics.wrong();
  for (const auto& [index, elements] : wrong) r.wrong_elements += elements;
  if (!wrong.empty()) {
    r.data_intact = false;
    const MetricRecord first = run.metrics[wrong.front().first];
    errors->push_back(fmt::format(
        "data check: {} wrong elements in {} records (first: rank {} on {}, iteration {})",
        r.wrong_elements, wrong.size(), first.rank, first.node, first.iter));
  }
  for (const Event& e : run.events) {
    if (e.type == "digest_check") {
      // The job's final state against the fault-free reference for as many
      // steps (fdrill-train-ref): unequal means work was lost or corrupted
      // across a restart even if every iteration's check passed.
      // A command's tolerance compares two numbers it printed (reports/digest.h).
      r.digest_steps = e.steps;
      if (!e.digest.empty()) r.digest = e.digest;
      if (!e.expected.empty()) r.expected_digest = e.expected;
      if (!e.digest_key.empty()) r.digest_key = e.digest_key;
      r.digest_tolerance = e.tolerance;
      if (e.tolerance) r.digest_difference = RelativeDifference(e.digest, e.expected);
      r.digest_intact = DigestsAgree(e.digest, e.expected, e.tolerance);
      if (r.digest && r.expected_digest && !r.digest_intact) {
        r.data_intact = false;
        errors->push_back(
            e.tolerance
                ? fmt::format("final {} {} after {} steps is not the fault-free {} within a "
                              "relative {:g}",
                              r.digest_key, *r.digest, e.steps.value_or(0), *r.expected_digest,
                              *e.tolerance)
                : fmt::format("final digest {} after {} steps differs from the fault-free {}",
                              *r.digest, e.steps.value_or(0), *r.expected_digest));
      }
    }
    // A relaunch counts as a restart whether or not it got going (one that
    // failed to start fails again: rollback.failures lists both).
    if (e.type == "workload_start" && e.attempt.value_or(0) > 0) ++r.restarts;
    if (e.type == "workload_restart") {
      r.iterations_lost += e.iterations_lost.value_or(0);
    } else if (JobFailedExit(e)) {
      // fdrill-collective exits 3 when its data check failed; any other
      // failure (a killed rank) ends the job without saying the data was
      // wrong: the job_completed expectation fails instead (Analyze). A
      // failure the restart policy recovered from (a workload_restart
      // follows) is in rollback.failures, not an error.
      if (*e.exit_code == 3) r.data_intact = false;
      if (*e.exit_code == 3 ||
          !RecoveredByRestart(run.events, static_cast<size_t>(&e - run.events.data()))) {
        errors->push_back(fmt::format("{}workload exited with code {}{}", Where(e.node),
                                      *e.exit_code,
                                      *e.exit_code == 3 ? " (data check failed)" : ""));
      }
    }
  }
  return r;
}

namespace {

// The per-fault limits (max_slowdown, max_time_to_recover, metrics) over
// FAULTS, and phase slowdowns over PHASES, each result's name prefixed with
// PREFIX ("" or "workloads.b.").
void JudgeFaults(const std::vector<FaultStats>& faults, const std::vector<PhaseStats>& phases,
                 std::optional<double> max_slowdown, std::optional<double> max_time_to_recover_s,
                 const std::vector<MetricExpectation>& metrics, const Summary& summary,
                 const std::string& prefix, std::vector<ExpectationResult>* out) {
  // Per fault: the measurement must exist and be within the limit.
  auto per_fault = [&](const char* name, std::optional<double> limit,
                       std::optional<double> FaultStats::*measured) {
    if (!limit) return;
    for (const FaultStats& f : faults) {
      const std::optional<double>& m = f.*measured;
      ExpectationResult e{.name = fmt::format("{}{}[{}]", prefix, name, f.id), .limit = *limit};
      if (m) e.measured = *m;
      e.pass = m && *m <= *limit;
      out->push_back(std::move(e));
    }
  };
  per_fault("slowdown", max_slowdown, &FaultStats::slowdown);
  per_fault("time_to_recover", max_time_to_recover_s, &FaultStats::time_to_recover_s);
  for (const MetricExpectation& m : metrics) {
    for (auto [bound, is_max] : {std::pair{m.max, true}, std::pair{m.min, false}}) {
      if (!bound) continue;
      auto judge = [&](const std::string& name, std::optional<double> measured) {
        ExpectationResult e{.name = fmt::format("{} {}{}", is_max ? "max" : "min", prefix, name),
                            .limit = *bound};
        if (measured) e.measured = *measured;
        e.pass = measured && (is_max ? *measured <= *bound : *measured >= *bound);
        out->push_back(std::move(e));
      };
      if (m.metric.find('.') != std::string::npos) {
        judge(m.metric, RunMetric(m.metric, summary));
        continue;
      }
      if (!m.phase.empty()) {
        // The phase as first run; a phase that never ran has no measurement.
        std::optional<double> measured;
        for (const PhaseStats& p : phases) {
          if (p.name == m.phase) {
            measured = p.slowdown;
            break;
          }
        }
        judge(fmt::format("{}[phase {}]", m.metric, m.phase), measured);
        continue;
      }
      bool any = false;
      for (const FaultStats& f : faults) {
        if (!m.fault.empty() && !FaultRefMatches(f.id, m.fault)) continue;
        any = true;
        judge(fmt::format("{}[{}]", m.metric, f.id), FaultMetric(m.metric, f));
      }
      // A named fault that never ran (the drill stopped before it) has no
      // measurement: the expectation fails rather than vanishing.
      if (!any && !m.fault.empty()) judge(fmt::format("{}[{}]", m.metric, m.fault), std::nullopt);
    }
  }
}

// The faults as one tenant felt them: each fault's id with that
// workload's numbers (none where the analysis has none for it).
std::vector<FaultStats> AsFeltBy(const std::string& workload, const std::vector<FaultStats>& all) {
  std::vector<FaultStats> out;
  for (const FaultStats& f : all) {
    FaultStats g;
    g.id = f.id;
    for (const WorkloadEffect& w : f.workloads) {
      if (w.workload != workload) continue;
      g.slowdown = w.slowdown;
      g.time_to_impact_s = w.time_to_impact_s;
      g.time_to_recover_s = w.time_to_recover_s;
      g.stall_ms = w.stall_ms;
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

std::vector<ExpectationResult> EvaluateExpectations(const Expectations& expected,
                                                    const Summary& summary) {
  std::vector<ExpectationResult> out;
  JudgeFaults(summary.faults, summary.phases, expected.max_slowdown, expected.max_time_to_recover_s,
              expected.metrics, summary, "", &out);
  for (const WorkloadExpectations& w : expected.workloads) {
    std::vector<PhaseStats> phases;
    for (const WorkloadStats& ws : summary.workloads) {
      if (ws.name == w.name) phases = ws.phases;
    }
    JudgeFaults(AsFeltBy(w.name, summary.faults), phases, w.max_slowdown, w.max_time_to_recover_s,
                w.metrics, summary, "workloads." + w.name + ".", &out);
  }

  if (expected.no_residue.value_or(false)) {
    // Measured: how many objects differ; null when the check did not run.
    ExpectationResult e{.name = "no_residue", .limit = 0.0};
    if (summary.residue_checked) e.measured = static_cast<double>(summary.residue.size());
    e.pass = summary.residue_checked && summary.residue.empty();
    out.push_back(std::move(e));
  }
  if (expected.job) out.push_back(JudgeJob(*expected.job, summary.faults));
  if (expected.data_intact.value_or(false)) {
    out.push_back({.name = "data_intact",
                   .limit = true,
                   .measured = summary.rollback.data_intact,
                   .pass = summary.rollback.data_intact});
  }
  return out;
}

std::vector<std::string> HarnessErrors(const RunData& run) {
  std::vector<std::string> out;
  const Event* end = nullptr;
  bool job_ended = false;
  for (const Event& e : run.events) {
    if (e.type == "error") out.push_back(Where(e.node) + e.message);
    // The job ending the drill is a result (the job_completed expectation),
    // not a harness error.
    // So is a stop condition or a gate's timeout: the drill stopped itself
    // as the scenario asked (the timeline_completed expectation fails).
    const bool result = e.cause == "job" || e.cause == "stop_condition" || e.cause == "gate";
    if (e.type == "abort" && !result) out.push_back("aborted: " + e.reason);
    if (e.type == "abort" && result) job_ended = true;
    if (e.type == "drill_end") end = &e;
  }
  if (end == nullptr) {
    out.push_back("the drill did not finish: events.jsonl has no drill_end");
  } else if (end->status != "completed" && !(end->status == "aborted" && job_ended)) {
    out.push_back("the drill ended with status " + end->status);
  }
  if (run.metrics.empty()) out.push_back("no iteration was recorded in metrics.jsonl");
  return out;
}

Verdict DecideVerdict(const std::vector<std::string>& harness_errors,
                      const std::vector<ExpectationResult>& expectations) {
  if (!harness_errors.empty()) return Verdict::kError;
  const bool all_pass = std::all_of(expectations.begin(), expectations.end(),
                                    [](const ExpectationResult& e) { return e.pass; });
  return all_pass ? Verdict::kPass : Verdict::kFail;
}

}  // namespace fdrill

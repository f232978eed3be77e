#include "reports/job_outcome.h"

#include "reports/analysis.h"

namespace fdrill {

namespace {

// ENDS: the events that end the job (a workload_failed, a failing exit), in
// the log's order: gathered once, not walked out of every event per fault.
std::string Outcome(const std::vector<const Event*>& ends, const std::vector<Iteration>& series,
                    const FaultStats& f, double until) {
  for (const Event* end : ends) {
    const Event& e = *end;
    if (e.t < f.applied_at_s || e.t >= until) continue;
    if (e.type == "workload_failed") return e.cause == "hang" ? "hang" : "error";
    if (JobFailedExit(e)) return "error";
  }
  // No exit: did the job complete an iteration after the fault was over?
  const double over = f.reverted_at_s.value_or(f.applied_at_s);
  for (const Iteration& it : series) {
    if (it.end_s > over) return "rode_through";
  }
  return "hang";
}

}  // namespace

void AddJobOutcomes(const std::vector<Event>& events, const std::vector<Iteration>& series,
                    const std::map<std::string, std::string>& predicted,
                    std::vector<FaultStats>* faults) {
  std::vector<const Event*> ends;
  for (const Event& e : events) {
    if (e.type == "workload_failed" || JobFailedExit(e)) ends.push_back(&e);
  }
  for (FaultStats& f : *faults) {
    f.job_outcome = Outcome(ends, series, f, StretchEnd(*faults, f));
    if (auto it = predicted.find(f.id); it != predicted.end()) f.predicted_job = it->second;
  }
}

ExpectationResult JudgeJob(const std::string& expectation, const std::vector<FaultStats>& faults) {
  bool holds = true;
  for (const FaultStats& f : faults) {
    if (expectation == "error_not_hang") {
      holds = holds && f.job_outcome != "hang";
    } else if (expectation == "rides_through") {
      holds = holds && f.job_outcome == "rode_through";
    } else if (expectation == "as_predicted") {
      holds = holds && (!f.predicted_job || *f.predicted_job == f.job_outcome);
    } else {
      holds = false;  // an expectation this build does not know
    }
  }
  return {.name = "job: " + expectation, .limit = true, .measured = holds, .pass = holds};
}

}  // namespace fdrill

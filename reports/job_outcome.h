// What the job did under each fault (FaultStats::job_outcome), judged from
// the run's events and iterations, over the fault's stretch: from its apply
// to the next fault's apply (or the run's end).
//
//   "hang"          the drill's restart policy called a hang (a
//                   workload_failed with cause hang), or the job neither
//                   exited nor completed another iteration after the fault
//                   was reverted (or applied, if it never was);
//   "error"         the job exited failing (workload_failed with cause exit,
//                   or a workload_exit with a non-zero code not forced by
//                   the drill);
//   "rode_through"  neither: it kept going, however slowly.
//
// With plan.json's predicted_job (NCCL's IB timeout against each link-down
// window, harness/scenario/nccl_ib_timeout.h) each fault also carries what
// was predicted. Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "reports/run_data.h"
#include "reports/series.h"
#include "reports/summary.h"

namespace fdrill {

void AddJobOutcomes(const std::vector<Event>& events, const std::vector<Iteration>& series,
                    const std::map<std::string, std::string>& predicted,
                    std::vector<FaultStats>* faults);

// expect.job against the faults' outcomes: one ExpectationResult named
// "job: <expectation>", measured true when it holds.
ExpectationResult JudgeJob(const std::string& expectation, const std::vector<FaultStats>& faults);

}  // namespace fdrill

// What Slurm did during a drill: from events.jsonl's slurm_node and
// slurm_job (controller/slurm_watch.h), each change with the state before
// it, and the one line per change report.md and report.html print. Pure.
#pragma once

#include <string>
#include <vector>

#include "reports/run_data.h"
#include "reports/summary.h"

namespace fdrill {

// One SlurmChange per slurm_node / slurm_job event, in order; `from` is the
// same node's (or job's) previous state, "" for its first.
std::vector<SlurmChange> AnalyzeSlurm(const std::vector<Event>& events);

// "t=41.2 s: n1 idle → down* (Not responding)", "t=3.0 s: n1 idle" for a
// first sample, "t=45.0 s: job 7 RUNNING → ended".
std::string SlurmChangeText(const SlurmChange& change);

}  // namespace fdrill

// Drill: runs one validated scenario on the agents of the emulated fabric or
// of a real cluster (a hosts file or Slurm allocation), as its DrillTargets
// resolved them (drill_targets.h, built by agent_set.h), and writes the run
// directory. On a real cluster the job's launcher runs on this host
// (harness/controller/cluster_launch.h). The order is the safety contract:
//   1. connect to every agent and take its lease; `check` every fault (the
//      agent parses params, finds the interface, applies its guards) —
//      any failure here ends the drill with nothing applied anywhere;
//   2. snapshot each node's links and qdiscs;
//   3. start the workload, wait until every rank reports;
//   4. walk the timeline (apply / revert at planned times);
//   5. stop the workload, revert_all on every agent (whatever happened),
//      snapshot again and record any difference as residue;
//   6. release the leases; the caller renders the report.
// An abort (Ctrl-C, lost agent, workload death) jumps to step 5.
//
// drill.cc is the orchestrator of those steps; the work is in
// drill_agents.h (connections, leases), workload_supervisor.h (step 3, the
// job's failures and restarts, its stop and digest), timeline_walker.h
// (step 4), residue.h (step 5's diff), and drill_events.h (every event).
#pragma once

#include <atomic>
#include <string>

#include "harness/controller/drill_targets.h"
#include "harness/controller/progress.h"
#include "harness/scenario/scenario.h"

namespace fdrill {

class ProcessRunner;  // common/host/host.h

struct DrillOptions {
  std::string out_dir;    // the run directory to create
  std::string bin_dir;    // where fdrill-collective and fdrill live
  std::string tls_dir;    // ca.pem + controller.pem/.key; empty: the targets' pki_dir
  bool insecure = false;  // plaintext to the agents (they must run --insecure too)
  Duration connect_timeout = std::chrono::seconds(5);
  Duration start_timeout = std::chrono::seconds(60);  // workload until every rank reports
  const std::atomic<bool>* abort = nullptr;           // set by SIGINT/SIGTERM
  ProgressLine* progress = nullptr;  // the live line (harness/controller/progress.h), or none
  // Runs the drill's own programs on this host (fdrill-train-ref, the
  // digest check of mode: train). Required; must outlive RunDrill.
  ProcessRunner* runner = nullptr;
};

// Errors before step 2 mean nothing was touched and no run directory was
// written. Afterwards the run directory holds whatever happened; the drill's
// own outcome is in events.jsonl (drill_end) and the caller's report.
// InvalidArgument when options.runner is not set. On the emulated fabric
// `targets` is DrillTargetsOfFabric's, on a real cluster DrillTargetsOfHosts'
// of the scenario's host_names; both outlive RunDrill.
Status RunDrill(const Scenario& scenario, const DrillTargets& targets, const DrillOptions& options);

}  // namespace fdrill

// DrillEvents: the one place a drill turns what happened into events.jsonl
// lines (their types and fields: docs/reference/formats.md), plus the run directory's
// metrics and files as the workload reports them. Components say what
// happened ("the fault was applied, verified"), never how it is written.
//
// Contract: until Attach (while connecting and checking faults, before the
// run directory exists) every call does nothing; afterwards each call is one
// line, in call order. Thread-safe as RunRecorder is: the controller, io,
// lease and launcher-reader threads all call it. The recorder must outlive
// every thread that can still call (drill.cc destroys it last).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/wire/wire.h"
#include "harness/controller/engine.h"
#include "harness/controller/recorder.h"
#include "harness/scenario/scenario.h"
#include "reports/localise.h"

namespace fdrill {

class DrillEvents {
 public:
  void Attach(RunRecorder* rec) { rec_ = rec; }
  bool attached() const { return rec_.load() != nullptr; }
  // The run directory; empty before Attach.
  std::string dir() const;

  // The run.
  void DrillStart(const std::string& name);
  void AgentConnected(const std::string& node, const std::string& address, int64_t offset_ns);
  void Snapshot(const std::string& node, const Json& state);
  void Abort(const std::string& reason, const std::string& cause);
  void DrillEnd(const std::string& status);
  void Error(const std::string& node, const std::string& message);
  void Error(const std::string& message);  // the drill's own, no node
  // An agent's connection dropped (it died, or its node went away) at
  // controller wall time wall_ns, with `faults_left` (ids) in force on it:
  // nobody but a restarted agent's journal sweep can revert them now.
  void AgentLost(const std::string& node, const std::string& reason,
                 const std::vector<std::string>& faults_left, int64_t wall_ns);
  // The lost agent answers again (a restarted one), at wall_ns.
  void AgentReconnected(const std::string& node, const std::string& address, int64_t wall_ns);
  // Its start-up journal sweep reverted `ids` at controller wall time wall_ns
  // (the agent's own time through its clock offset).
  void FaultsSwept(const std::string& node, const std::vector<std::string>& ids, int64_t wall_ns);
  // What Slurm said (controller/slurm_watch.h): a node's state and reason,
  // the allocation's job state; each when it changed.
  void SlurmNode(const std::string& node, const std::string& state, const std::string& reason);
  void SlurmJob(const std::string& job, const std::string& state);

  // The timeline. A fault's apply is journalled before the call is made.
  void Phase(Action::Kind kind, const std::string& phase, const std::string& reason);
  void FaultApply(const FaultSpec& f, const std::string& reason);
  // `target`: what the agent resolved the fault to act on (its apply reply:
  // "fab0", "mlx5_0/1", "gpu0", "rank 2 (pid 1234)"); summary.json's target.
  void FaultApplied(const FaultSpec& f, const std::string& target, bool verified);
  void FaultRevert(const std::string& id, const std::string& node, const std::string& reason);
  void FaultReverted(const std::string& id, const std::string& node, bool verified);
  void ImpactSeen(const std::string& id, Duration after);
  // The live localisation named (another) culprit for fault `id`.
  void CulpritNamed(const std::string& id, const Culprit& c);

  // The workload. `node` is where it was started or seen: n0's agent, or
  // "controller" for a real cluster's launcher; `workload` a tenant's name
  // (written when not empty).
  void WorkloadStart(const std::string& node, const std::string& workload,
                     const std::vector<std::string>& argv);
  void WorkloadRestart(const std::string& node, const std::vector<std::string>& argv, int attempt);
  // It exited by itself: the event, and its output tail as workload.log.
  // A tenant's log is workload-<name>.log.
  void WorkloadExited(const std::string& node, const std::string& workload, int exit_code,
                      const std::string& log_tail);
  // It was stopped by force; exit_code as the agent or launcher gave it.
  void WorkloadKilled(const std::string& node, const Json& exit_code);
  void WorkloadLog(const std::string& workload, const std::string& log_tail);
  static std::string LogName(const std::string& workload) {
    return workload.empty() ? "workload.log" : "workload-" + workload + ".log";
  }
  void WorkloadHung(const std::string& reason);
  void WorkloadFailed(int exit_code);
  void RanksKilled(const std::string& node, int count);
  void RelaunchScheduled(int restart, Duration in, int64_t last_step);
  void Resumed(int restart, int attempt, int64_t resumed_step, int64_t iterations_lost);
  // A node's counters push, made whole (`whole`) and as it came (`push`:
  // {counters, delta?}, agents/counters_delta.h). events.jsonl holds the
  // node's first sample of the run whole and then each push as it came —
  // mostly only what changed (docs/reference/formats.md); the report makes them
  // whole again (reports/run_dir.cc).
  void Counters(const std::string& node, const Json& whole, const Json& push);
  // What the NCCL job's RAS service said on a node (a `ras` push, or a
  // ras_watch the agent refused): {node, wall_ns, answered, ras_status |
  // ras_error}.
  void Ras(const std::string& node, const Json& sample);
  // A node's agent listens to its RDMA devices' async events (an ib_watch
  // reply with watching: {node, devices}), or could not ({node, ib_error}).
  void IbWatch(const std::string& node, const Result<Json>& reply);
  // One async event an RDMA device of a node reported (an `ib_async` push):
  // {node, device, port, event, wall_ns}.
  void IbAsync(const std::string& node, const Json& push);
  // --train: the job's final digest against fdrill-train-ref's.
  void DigestMissing();
  // KEY is the line the digest came from ("digest" bitwise); TOLERANCE, when
  // set, the relative difference allowed between two numbers.
  void DigestCheck(int64_t steps, const std::string& digest, const std::string& expected,
                   const std::string& key = "digest",
                   std::optional<double> tolerance = std::nullopt);

  // The end: what the post-drill snapshot differs in, and run directories
  // a node kept.
  void Residue(const Json& items);
  void RunDirKept(const std::string& node, const std::string& reason);

  // Not events: records to metrics.jsonl and files of the run directory.
  void Metrics(const std::string& node, const std::string& workload, const Json& records,
               int64_t offset_ns, int attempt);
  Status WriteFile(const std::string& name, const std::string& content);

 private:
  void Event(const std::string& type, Json fields);

  std::atomic<RunRecorder*> rec_{nullptr};
  std::mutex counters_mu_;
  std::set<std::string> counters_whole_;  // nodes with a whole sample in events.jsonl
};

}  // namespace fdrill

// WorkloadSupervisor: one of the drill's workloads (the only one, or one
// tenant of workloads:) from launch to its last word — fdrill-collective
// through its first node's agent on the emulated fabric, or a real
// cluster's launcher on this host (LocalJob); the ranks' metrics as agents
// push them (or nccl-tests' table as the launcher prints it) into the run
// directory and the live monitor; a failed or hung job stopped and, within
// workload.restart, relaunched from its checkpoint; at the end, stopped
// (cleanly first) and, with mode: train, its final digest checked against
// fdrill-train-ref's, run through the injected ProcessRunner.
//
// Threads: On* run on the io thread (agent pushes) or the launcher's reader
// thread; they take DrillState::mu. Members named *Locked need mu held. The
// rest run on the controller thread only. The supervisor must be destroyed
// before DrillEvents and DrillState (its launcher may report an exit while
// it stops).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/controller/drill_context.h"
#include "harness/controller/local_job.h"
#include "harness/scenario/scenario.h"
#include "workloads/nccl_tests_output.h"
#include "workloads/step_lines.h"

namespace fdrill {

class ProcessRunner;
struct DrillOptions;

class WorkloadSupervisor {
 public:
  // What the job looks like at one turn of the timeline.
  struct Health {
    std::optional<int> exit_code;     // it exited (and no relaunch cleared it)
    std::optional<std::string> hang;  // why it counts as hung (workload.restart.hang_timeout)
  };

  // `w` is Scenario::Workloads()[index]: its live view is
  // state.monitors[index].
  WorkloadSupervisor(const DrillContext& ctx, WorkloadSpec w, size_t index, ProcessRunner& runner)
      : s_(ctx.s),
        w_(std::move(w)),
        index_(index),
        targets_(ctx.targets),
        opt_(ctx.opt),
        runner_(runner),
        clock_(ctx.clock),
        state_(ctx.state),
        agents_(ctx.agents),
        events_(ctx.events) {}

  const WorkloadSpec& spec() const { return w_; }
  // Whether NODE runs this workload's ranks.
  bool Has(const std::string& node) const;
  // Names the ranks' run directory on every node (/tmp/fdrill-<run_id>,
  // with a tenant's name after it);
  // before Start, Stop or RemoveRunDirs.
  void set_run_id(const std::string& run_id) { run_id_ = run_id; }
  // How many ranks report iterations: every rank (fdrill-collective), one
  // (nccl-tests prints one table), none (a command with output none).
  int ReportingRanks() const;

  // Agent pushes (io thread).
  void OnMetrics(const AgentFacts& n, const Json& records);
  void OnExit(const std::string& node, int code, const std::string& log_tail);

  // Every agent watches its node's run directory, the job starts, and Start
  // returns once every reporting rank has reported (or the job exited, the
  // drill aborted, or opt.start_timeout passed: an error).
  Status Start();
  // Start's first half, for a tenant that arrives mid-drill (start: PHASE):
  // the agents watch and the job is launched; its ranks report when they
  // do, the timeline does not wait for them.
  Status Begin();
  bool started() const { return started_; }

  // Each turn of the timeline: HealthLocked reads, Supervise acts. A failed
  // or hung job is stopped; the policy relaunches it later (Supervise
  // relaunches when due) or Supervise returns why the drill ends.
  Health HealthLocked(Duration now) const;
  bool ExitedLocked() const { return workload_exit_.has_value(); }
  int restarts_locked() const { return restarts_; }
  std::optional<std::string> Supervise(Duration now, const Health& health);

  // The end: asks the job to stop cleanly, then makes sure (the launcher's
  // group, then every agent's leftovers).
  void Stop();
  // mode: train: the job's final digest against fdrill-train-ref's.
  void CheckDigest();
  // expect.digest: the job's last "digest: HEX" line (or, with a
  // tolerance, its last "KEY: NUMBER") against the same command's, run
  // fault-free on loopback with as many ranks (mpirun in this namespace,
  // each rank under `fdrill job-rank`, a checkpoint directory of its own in
  // the run directory).
  void CheckJobDigest();
  // A real cluster: each node's run directory goes once its files are in
  // the run directory (the emulated fabric's go with `fdrill fabric down`).
  void RemoveRunDirs();

 private:
  // Where node n's ranks write their JSONL and its agent reads it: under the
  // node's TMPDIR on the emulated fabric, /tmp on a real one (the ranks run
  // as the operator, the agent as root: /tmp is what both have).
  std::string RunDir(const AgentFacts& n) const;
  std::string RunDirName() const;  // fdrill-<run_id>[-<tenant>]
  std::vector<std::string> Collective() const;
  // The ranks' metrics file template ({tmpdir}, {host}, {rank}).
  std::string MetricsPath() const;
  // A command of the operator's own: {checkpoint_dir} expanded (the first
  // node's run directory, which every emulated node sees), each rank under
  // `fdrill job-rank` when its step lines or framework need it.
  std::vector<std::string> JobCommand() const;
  // Rank 0's address, for a framework's rendezvous (MASTER_ADDR): the
  // first node's fabric address on the emulated fabric, its host name on a
  // real one.
  std::string MasterAddr() const;
  static constexpr int kMasterPort = 29500;  // torchrun's default
  // The job killed on every node at once (no grace: no agent waits on
  // mpirun inside its loop); n0's log tail on the emulated fabric, else "".
  std::string KillJob();
  // No step line in time: the job stopped, its log kept, the error naming
  // the pattern and the log's last lines.
  Status NoStepLine();
  Status Launch(const std::vector<std::string>& argv);
  // A real cluster's job runs on this host (LocalJob): its output lines.
  void OnJobLine(const std::string& line);
  // One line of a launcher of its own's output, through step_reader_.
  void OnJobStepLine(const std::string& line);
  // FROM_NODE: the agent that pushed RECORDS ("" from a launcher's output):
  // the node of a record that does not name one.
  void FeedMonitorLocked(int64_t offset_ns, const Json& records, const std::string& from_node);
  // The job failed (code) or hung: schedule a relaunch if the policy allows,
  // else the reason the drill ends with.
  std::optional<std::string> OnJobFailure(Duration now, int code, bool hang);
  void Relaunch(Duration now);
  // The agents kill what is left of a failed job (its launcher and every
  // rank on their node); the launcher's exit code, or -1.
  int StopRemains();
  std::string StartNode() const;

  // This workload's nodes, in its order; its first launches the job.
  std::vector<const AgentFacts*> Nodes() const;
  const AgentFacts& Lead() const { return *Nodes().front(); }
  LiveMonitor& monitor() const { return *state_.monitors[index_]; }

  const Scenario& s_;
  const WorkloadSpec w_;
  const size_t index_;
  const DrillTargets& targets_;
  const DrillOptions& opt_;
  ProcessRunner& runner_;
  const Clock& clock_;
  DrillState& state_;
  AgentCalls& agents_;
  DrillEvents& events_;
  std::string run_id_;

  // Guarded by state_.mu.
  std::set<int> ranks_seen_;
  std::optional<int> workload_exit_;
  bool started_ = false;  // launched (Begin); controller thread only
  std::string last_log_tail_;
  // Restart policy (workload.restart), guarded by state_.mu where the io
  // thread reads it: which launch of the workload runs, how many relaunches
  // so far, whether the latest one has reported, and what the failed one
  // had done.
  int attempt_ = 0;
  int restarts_ = 0;
  bool awaiting_first_ = false;
  int64_t lost_from_ = -1;  // the last step the failed attempt completed
  std::optional<Duration> relaunch_at_;
  std::vector<std::string> launch_argv_;
  // Real clusters: the launcher's output parser (reader thread, under mu
  // for the iteration count).
  // launcher: none with metrics: the launcher's own output, read here (a
  // reader per launch: a relaunch starts its steps again).
  std::optional<StepLineReader> step_reader_;
  std::optional<int64_t> last_job_step_;
  NcclTestsParser nccl_parser_;
  int64_t external_iter_ = 0;
  // Set when Stop begins: an exit from then on is the drill's doing (a
  // launcher that dies of the SIGTERM Stop sends reports it before Stop
  // does), recorded as forced, never as the job failing.
  std::atomic<bool> stopping_{false};
  // Declared last: destroyed first, it stops the launcher and joins its
  // reader, which may still call OnExit.
  std::unique_ptr<LocalJob> job_;
};

}  // namespace fdrill

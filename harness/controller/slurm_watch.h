// What Slurm says while a drill runs on a Slurm fabric (fabric: {slurm:
// true}): once a second, the state and reason of each of the drill's nodes
// (`sinfo --noheader --Node --nodes LIST --format "%N|%T|%E"`) and, inside
// an allocation, the job's state (`squeue --noheader --jobs ID --format
// %T`). Each change is handed to the callback when it is first seen — the
// first sample too, so the record starts from what Slurm said at the start
// — which the drill writes as `slurm_node` and `slurm_job` events. The
// report's "What Slurm did" comes from those.
//
// sinfo and squeue run as the user who runs `fdrill run`, with its
// environment (SLURM_CONF, when set). A sample that fails (slurmctld not
// answering) is skipped and said once as state "no answer".
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/core/clock.h"
#include "common/host/host.h"

namespace fdrill {

struct SlurmNodeState {
  std::string node;
  std::string state;   // sinfo's %T: "idle", "allocated", "down*", "idle*", "drained"...
  std::string reason;  // %E; "none" when Slurm gives none
};

// sinfo's lines "n1|down*|Not responding" for the nodes asked.
std::vector<SlurmNodeState> ParseSinfoStates(const std::string& out);

class SlurmWatch {
 public:
  using NodeFn = std::function<void(const SlurmNodeState&)>;
  using JobFn = std::function<void(const std::string& job, const std::string& state)>;

  // nodelist: a hostlist expression (the allocation's SLURM_JOB_NODELIST);
  // job: SLURM_JOB_ID, or "" outside an allocation.
  SlurmWatch(ProcessRunner& runner, std::string nodelist, std::string job, NodeFn on_node,
             JobFn on_job)
      : runner_(runner),
        nodelist_(std::move(nodelist)),
        job_(std::move(job)),
        on_node_(std::move(on_node)),
        on_job_(std::move(on_job)) {}
  ~SlurmWatch() { Stop(); }
  SlurmWatch(const SlurmWatch&) = delete;
  SlurmWatch& operator=(const SlurmWatch&) = delete;

  // One sample now (the caller's thread); what changed goes to the callbacks.
  void SampleOnce();
  // SampleOnce every `interval` on a thread of its own until Stop.
  void Start(Duration interval);
  void Stop();

 private:
  ProcessRunner& runner_;
  std::string nodelist_;
  std::string job_;
  NodeFn on_node_;
  JobFn on_job_;
  std::map<std::string, SlurmNodeState> last_;  // by node
  std::string last_job_;
  bool said_no_answer_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace fdrill

// What `fdrill fabric up` and the daemons it starts (fabric_daemons.cc)
// share: steps run with their undo remembered, waiting for a process to be
// ready, and the tail of its log for the error when it is not. Internal to
// fabric/.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/core/units.h"
#include "fabric/fabric_up.h"

namespace fdrill {

// Runs steps and remembers how to undo what succeeded.
class Rollback {
 public:
  explicit Rollback(ProcessRunner& runner) : runner_(runner) {}

  Status Run(const FabricStep& step) {
    auto r = RunChecked(runner_, step.argv);
    if (!step.undo.empty() && (r.ok() || step.undo_if_failed)) undo_.push_back(step.undo);
    return r.ok() ? Status::Ok() : r.status();
  }
  void Add(std::vector<std::string> undo) { undo_.push_back(std::move(undo)); }

  // Undoes everything in reverse; returns the undo commands that failed.
  std::vector<std::string> Unwind() {
    std::vector<std::string> failed;
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) {
      auto r = RunChecked(runner_, *it);
      if (!r.ok()) failed.push_back(r.status().message());
    }
    undo_.clear();
    return failed;
  }

 private:
  ProcessRunner& runner_;
  std::vector<std::vector<std::string>> undo_;
};

// Starts `spec` (NodeSystem::Spawn) and remembers to SIGKILL it if `up`
// rolls back; a failure to start says `what` ("starting sshd on n2").
inline Result<int> SpawnOrUndo(const FabricHost& host, const SpawnSpec& spec, Rollback& rollback,
                               const std::string& what) {
  auto pid = host.node->Spawn(spec);
  if (!pid.ok()) return pid.status().Annotate(what);
  rollback.Add({"kill", "-s", "KILL", std::to_string(*pid)});
  return pid;
}

// The last 600 bytes of the log at `path`, for an error message.
std::string LogTail(SysFs& fs, const std::string& path);

// Waits up to `timeout` for `ready`; between tries sleeps 100 ms. False on
// timeout or when `dead` says the process waited for is gone.
template <typename Ready, typename Dead>
Status WaitFor(const FabricHost& host, Duration timeout, Ready ready, Dead dead,
               const std::string& what, const std::string& log) {
  const auto deadline = host.clock->Now() + timeout;
  for (;;) {
    if (ready()) return Status::Ok();
    if (dead()) return Unavailable(what + " exited; " + LogTail(*host.fs, log));
    if (host.clock->Now() >= deadline)
      return DeadlineExceeded(what + " not ready within " + FormatDuration(timeout) + "; " +
                              LogTail(*host.fs, log));
    host.node->SleepFor(std::chrono::milliseconds(100));
  }
}

// --sshd: the fabric's ssh keys and files (fabric/sshd.h), then one sshd
// per node; waits until each accepts a connection on its management address.
Status StartSshds(FabricState& state, const UpOptions& options, const FabricHost& host,
                  Rollback& rollback);

// --slurm: the fabric's munged, slurmctld and a slurmd per node
// (fabric/slurm.h); returns once sinfo says every node is idle.
Status StartSlurm(FabricState& state, const UpOptions& options, const FabricHost& host,
                  Rollback& rollback);

}  // namespace fdrill

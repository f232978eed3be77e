// The command line that starts a real cluster's job from the controller's
// host (LocalJob runs it). One rank set per node of the drill, first node
// first, workload.ranks_per_node on each.
//
//   mpirun (Open MPI 4.1/5): mpirun --hostfile <run>/hostfile -np N*R
//       --map-by ppr:R:node --mca plm_rsh_agent <rsh_agent> <launcher_args>
//       <program>. The hostfile holds "host slots=R" per node (a hostfile, not
//       -H: a thousand nodes do not fit a command line comfortably).
//       rsh_agent is ssh by default; "rsh" or any command works the same way
//       (Open MPI calls `<agent> <host> <orted words>`).
//   srun (inside the allocation, SLURM_JOB_ID in the environment):
//       srun --nodes=N --ntasks-per-node=R --nodelist=<SLURM_JOB_NODELIST> --kill-on-bad-exit=1
//       --unbuffered <launcher_args> <program>. --kill-on-bad-exit ends the
//       step when a rank dies (as mpirun does), --unbuffered passes output
//       through line by line.
//   none: <program> as written (it starts itself: a site's own wrapper).
// program is fdrill-collective's command line, or workload.command; with
// output nccl-tests it runs under `stdbuf -oL` so every result row reaches
// the controller as it is printed (a rank's stdout into a pipe is otherwise
// block-buffered by stdio).
#pragma once

#include <string>
#include <vector>

#include "common/core/result.h"
#include "common/host/host.h"
#include "harness/scenario/scenario.h"

namespace fdrill {

// Where a job's ranks meet and keep their files (workload.command).
struct JobPlaces {
  std::string checkpoint_dir;  // {checkpoint_dir}
  std::string metrics_path;    // --jsonl's template; "" for no step records
  std::string master_addr;     // framework: MASTER_ADDR
  int master_port = 29500;
  std::string ifnames;  // GLOO_SOCKET_IFNAME ("fab0,fab1"); "" leaves the job's choice
  // The ranks' niceness; 0 leaves it. The emulated fabric's nodes share
  // this machine's cores with their agents, which answer lease renewals
  // within 1 s: ranks that keep every core busy (a PyTorch job's do) run at
  // kEmulatedJobNice there.
  int nice = 0;
};
inline constexpr int kEmulatedJobNice = 10;

// The emulated fabric's rail interfaces as GLOO_SOCKET_IFNAME takes them:
// "fab0", "fab0,fab1", ...
std::string RailInterfaces(int rails);

// workload.command with {checkpoint_dir} expanded and, when its step lines
// or framework need it (WorkloadSpec::WrapsRanks), each rank under
// `<fdrill_bin> job-rank ... -- <command>` (harness/cli/cmd_job_rank.cc).
std::vector<std::string> JobRankArgv(const WorkloadSpec& w, const std::string& fdrill_bin,
                                     const JobPlaces& at);

// "gpu01 slots=8\ngpu02 slots=8\n..." in the drill's node order.
std::string ClusterHostfile(const Scenario& s);

std::vector<std::string> ClusterLaunchArgv(const Scenario& s,
                                           const std::vector<std::string>& program,
                                           const std::string& hostfile_path);

// Before anything is touched on a hosts or Slurm fabric whose launcher is
// mpirun: `<rsh_agent words> <host> true` for every host (32 at a time,
// each within `timeout`), as Open MPI will start its daemons. FailedPrecondition
// naming every host that refused, what the agent said, and what to fix;
// Ok for any other launcher or an emulated fabric.
Status CheckRshReachesEveryHost(const Scenario& s, ProcessRunner& runner, Duration timeout);

}  // namespace fdrill

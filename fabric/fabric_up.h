// `fdrill fabric up`: builds the fabric FabricState describes (see
// fabric_state.h for the naming), starts one agent per node and waits until
// every agent accepts a TCP connection on its management address.
//
// Contract:
// - Refuses (touching nothing) a shape that cannot be built (CheckShape),
//   more nodes than this machine's memory holds (CheckRoomFor), and
//   (FailedPrecondition) any part of a fabric with this layout that exists:
//   fabric.json, a <netns_prefix>* namespace, a <root_prefix>* link, the
//   state dir.
// - Every step is one argv (ip, mkdir, touch, unshare) run through
//   ProcessRunner; each step that creates something records how to undo it.
//   When a step fails, the undo list runs in reverse (best effort) and the
//   error names the failing command. So a failed `up` leaves nothing behind.
// - Fabric traffic never touches the root namespace: both ends of every
//   fabric veth are created directly inside their namespaces.
// - Unless options.insecure, a fresh CA and certificates for "controller"
//   and every node are made in <state_dir>/pki (0700) before any agent
//   starts, each agent serves mutual TLS with its own, and fabric.json
//   records pki_dir so `fdrill run` dials with controller.pem.
// - With options.sshd, once the agents are started, the fabric's ssh keys
//   and configs are made in <state_dir>/ssh and one sshd is started in every
//   node (fabric/sshd.h); `up` returns once each accepts a connection on its
//   management address, port 22. The host's own ssh is never touched.
// - With options.slurm, last before the supervisor: the fabric's munge key,
//   slurm.conf and hosts in <state_dir>/slurm, then munged, slurmctld and a
//   slurmd in every node (fabric/slurm.h); `up` returns once sinfo reports
//   every node idle.
// - With options.supervisor_argv, the agents' supervisor
//   (fabric/agent_supervisor.h) is started last, in the root namespace,
//   logging to <state_dir>/supervisor.log; fabric.json records its pid, and
//   from then on it restarts an agent that dies.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fabric/fabric_state.h"
#include "fabric/node_system.h"

namespace fdrill {

struct FabricStep {
  std::vector<std::string> argv;
  std::vector<std::string> undo;  // empty: goes away with an enclosing object
  bool undo_if_failed = false;    // the step may half-succeed (a mount, then exec)
};

// The creation steps for `state`, in order: state dir, management bridge,
// every switch's namespace and bridge, the leaf-spine uplinks, then per node
// its namespace, fabric link per rail, management link and UTS namespace,
// and last the modelled capacities (tbf on switch ports). Pure.
std::vector<FabricStep> BuildSteps(const FabricState& state);

// The agent command line for `node` (a node or a switch's agent): with
// state.pki_dir, --tls-ca/--tls-cert/--tls-key from there; without,
// --insecure. A switch's agent gets `--allow PORT` for each of its ports,
// so it refuses any fault on anything else.
std::vector<std::string> AgentArgv(const FabricState& state, const FabricNode& node);

// FailedPrecondition "fabric already up with N nodes; ..." when anything of a
// fabric with this layout exists.
Status CheckNoFabric(const FabricLayout& layout, const FabricHost& host);

// The first management /24 a named fabric may take: "198.19.K" for the
// lowest K from kFirstNamedMgmtNet that no root-namespace interface has an
// address in (`ip -4 -o addr show`). The caller holds a lock across this and
// the bridge's creation (`fdrill fabric up` does, /run/fdrill/.mgmt.lock).
Result<std::string> FreeMgmtNet(ProcessRunner& runner);

struct UpOptions {
  FabricLayout layout = FabricLayout::Default();
  FabricShape shape;      // --nodes 4 alone: one rail, one leaf, unshaped
  std::string agent_bin;  // absolute path
  bool wait_ready = true;
  // false (--no-agents): no agent, no supervisor; the nodes' agents are
  // started as on a cluster (a Slurm step, by hand), from their own
  // /etc/fdrill.
  bool agents = true;
  bool insecure = false;  // agents serve plaintext (--insecure); no pki made
  // --sshd: OpenSSH's sshd in every node (fabric/sshd.h). sshd_bin and
  // keygen_bin are absolute paths (CheckSshdInstalled finds them).
  bool sshd = false;
  std::string sshd_bin;
  std::string keygen_bin;
  // --slurm: munged and slurmctld on the controller side, a slurmd in every
  // node (fabric/slurm.h). The programs' absolute paths (CheckSlurmInstalled).
  bool slurm = false;
  struct SlurmPrograms {
    std::string munged, mungekey, slurmctld, slurmd, sinfo, unshare, sh, env;
  } slurm_bin;
  // The supervisor's command line (SupervisorArgv: `fdrill fabric supervise
  // --state-dir DIR`); empty: the agents run unsupervised.
  std::vector<std::string> supervisor_argv;
  Duration ready_timeout = std::chrono::seconds(10);
};

// What one emulated node needs of this machine's memory: its agent (~12 MiB
// resident, docs/performance.md), its namespaces, and one rank of the
// workload with MPI's buffers, rounded up.
inline constexpr int kMemoryPerNodeMiB = 64;

// FailedPrecondition naming --nodes when MemAvailable (/proc/meminfo) is
// under nodes x kMemoryPerNodeMiB; Ok when /proc/meminfo cannot be read.
Status CheckRoomFor(const FabricShape& shape, SysFs& fs);

// For --sshd: fills options->sshd_bin and keygen_bin from PATH; NotInstalled
// naming the Debian package (openssh-server, openssh-client) when missing.
Status CheckSshdInstalled(UpOptions* options);

// For --slurm: fills options->slurm_bin from PATH (and /usr/sbin);
// NotInstalled naming the Debian package when one is missing.
Status CheckSlurmInstalled(UpOptions* options);

Result<FabricState> FabricUp(const UpOptions& options, const FabricHost& host);

// <state_dir>/supervisor.log: the supervisor's stdout and stderr.
inline std::string SupervisorLogPath(const FabricState& state) {
  return state.state_dir + "/supervisor.log";
}

}  // namespace fdrill

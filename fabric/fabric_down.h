// `fdrill fabric down`: removes every trace of a fabric with this layout.
//
// Contract:
// - Idempotent: on a machine with no fabric it does nothing and says so.
// - Works without fabric.json (after a crash): namespaces are found in
//   `ip netns list` by netns_prefix, root-namespace links in `ip -o link show`
//   by root_prefix, UTS bind mounts in /proc/self/mountinfo under state_dir.
// - The agents' supervisor (fabric.json's supervisor_pid) is stopped first
//   (SIGTERM, SIGKILL after 3 s), so nothing restarts an agent being
//   stopped; then fabric.json is read again for the agents' latest pids.
// - Agents get SIGTERM, SIGKILL after 3 s, and only while
//   /proc/<pid>/cmdline still names the agent for that node: those
//   fabric.json names, and any other process running the agent for a node
//   with that node's --state-dir (FindAgents), so an agent started by a
//   supervisor that crashed before recording its pid is stopped too.
// - Then the nodes' sshds (`up --sshd`): fabric.json's and any other with
//   <state_dir>/ssh/sshd_config on its command line, SIGTERM then SIGKILL;
//   then every process still in one of the fabric's namespaces (`ip netns
//   pids`: an ssh session's orted and ranks) gets SIGKILL, since it would
//   keep a deleted namespace alive. Slurm's daemons (`up --slurm`) stop the
//   same way, found by <state_dir>/slurm's files on their command lines:
//   the slurmds, then slurmctld, then munged.
// - Best effort: one failing removal does not stop the others; the error
//   lists every failure.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fabric/fabric_state.h"
#include "fabric/node_system.h"

namespace fdrill {

struct DownReport {
  bool found_nothing = false;
  bool supervisor_stopped = false;
  int agents_stopped = 0;
  int agents_killed = 0;             // needed SIGKILL
  int sshds_stopped = 0;             // `up --sshd`'s, and any other with its sshd_config
  int slurm_stopped = 0;             // `up --slurm`'s slurmds, slurmctld and munged
  int processes_killed = 0;          // left in the fabric's namespaces after those
  std::vector<std::string> removed;  // "netns fdrill-n0", "link fdm-br", "mount ...", "dir ..."
};

struct DownOptions {
  FabricLayout layout = FabricLayout::Default();
  Duration term_grace = std::chrono::seconds(3);
};

Result<DownReport> FabricDown(const DownOptions& options, const FabricHost& host);

}  // namespace fdrill

// Entering a fabric node: the setns/exec syscalls behind `fdrill fabric exec`,
// `fdrill fabric rsh` and agent start-up. Kept in this one small file so the
// rest of the fabric acts only through ProcessRunner.
//
// A node is its network namespace (/run/netns/<netns>), its UTS namespace (the
// bind mount at uts_path, hostname = node name) and its TMPDIR. Whoever
// enters it also gets a mount namespace of its own with the node's sysfs on
// /sys, as `ip netns exec` does, so /sys/class/net lists the node's fab* and
// mgmt0 (the agent's inventory and netdev counters read them there); the
// machine's /sys/fs/cgroup is bound back in, so cgroup faults act on the
// real hierarchy. When the node has its own files (FabricNode::files_root),
// <files_root>/etc/fdrill and <files_root>/var/lib/fdrill are bound over
// /etc/fdrill and /var/lib/fdrill (kNodeLocalDirs): what an agent, an ssh
// session or a Slurm step in n2 reads and writes there is n2's, as on a
// cluster where every node has its own disk. The mount points must exist
// on the machine (`fabric up` makes missing ones and records them).
//
// These change the calling process. Call them from a single-threaded process
// (the CLI) or in a child after fork().
#pragma once

#include <string>
#include <vector>

#include "common/core/status.h"
#include "fabric/fabric_state.h"

namespace fdrill {

// The directories every node has its own of (above).
inline const std::vector<std::string> kNodeLocalDirs = {"/etc/fdrill", "/var/lib/fdrill"};

// setns into the node's network and UTS namespaces, remount /sys in a new
// mount namespace (above), bind the node's own files when files_root is not
// empty, and set TMPDIR. Needs CAP_SYS_ADMIN. On error the process may have
// done only the first steps.
Status EnterNode(const std::string& netns_path, const std::string& uts_path,
                 const std::string& tmpdir, const std::string& files_root);
Status EnterNode(const FabricNode& node);

// EnterNode, then execvp(argv). Returns only on failure.
Status ExecInNode(const FabricNode& node, const std::vector<std::string>& argv);

// What ssh would run remotely for Open MPI's plm_rsh_agent call
// `<agent> HOST WORD...`: {"/bin/sh", "-c", "WORD WORD ..."}. The words are
// shell text written by mpirun (PATH=...; export PATH; orted ...); joining
// them with spaces is exactly what sshd does.
std::vector<std::string> RshShellArgv(const std::vector<std::string>& words);

// `fdrill fabric rsh HOST WORD...`: maps HOST (fabric or management address,
// or node name, optionally "user@host") to its node and execs the shell
// there. Returns only on failure.
Status RshExec(const FabricState& state, const std::vector<std::string>& host_and_words);

}  // namespace fdrill

// What of a fabric exists on the machine right now, found by name rather than
// by fabric.json, so teardown works after a crash. Read-only.
#pragma once

#include <string>
#include <vector>

#include "common/host/host.h"
#include "fabric/fabric_state.h"

namespace fdrill {

// Parses `ip netns list` ("fdrill-n0 (id: 3)" or "fdrill-sw") into names.
std::vector<std::string> ParseNetnsList(const std::string& out);
// Parses `ip -o link show` ("7: fdm-n0@if2: <...> ...") into link names.
std::vector<std::string> ParseLinkNames(const std::string& out);
// Mount points in /proc/self/mountinfo text at or below dir, deepest first.
std::vector<std::string> ParseMountsUnder(const std::string& mountinfo, const std::string& dir);

std::vector<std::string> WithPrefix(const std::vector<std::string>& names,
                                    const std::string& prefix);

struct FabricInventory {
  std::vector<std::string> netns;       // namespaces named <netns_prefix>*
  std::vector<std::string> root_links;  // root-ns links named <root_prefix>*
  std::vector<std::string> mounts;      // mounts under the state dir (UTS bind mounts)
  bool state_dir_exists = false;
  bool state_file_exists = false;

  bool empty() const {
    return netns.empty() && root_links.empty() && mounts.empty() && !state_dir_exists;
  }
  // Node namespaces (<netns_prefix>n<i>) among `netns`.
  int NodeCount(const FabricLayout& layout) const;
};

Result<FabricInventory> TakeInventory(const FabricLayout& layout, ProcessRunner& runner, SysFs& fs);

// /proc/<pid>/cmdline's words; empty when the process is gone or a zombie.
std::vector<std::string> ReadCmdline(SysFs& fs, int pid);

// A daemon of the fabric (an sshd, slurmd, slurmctld, munged) is told apart
// by a file of the fabric on its command line. The words of
// /proc/<pid>/cmdline are joined with single spaces, with one space before
// and after, so " -f /run/fdrill/fabric/ssh/sshd_config " matches whole
// words; joined, because some daemons rewrite their process title into one
// word ("sshd: /usr/sbin/sshd -D -f ... [listener] ...").
bool CmdlineContains(SysFs& fs, int pid, const std::string& needle);
// Every live process whose command line contains `needle` (as above), by
// listing /proc: how `fabric down` finds a daemon fabric.json lost. A
// process under another root directory (/proc/<pid>/root is not our /: a
// chroot, or the machine outside ours, where another fabric may use the same
// paths) is never one of ours.
std::vector<int> FindByCmdline(SysFs& fs, const std::string& needle);

// True when `pid` no longer runs: /proc/<pid>/stat is gone or says zombie.
// (A command line cannot say it: it reads empty for a moment while the
// process execs, as a process started through `unshare ... sh -c 'exec
// ...'` does twice.)
bool ProcessGone(SysFs& fs, int pid);

// True when `pid` is alive and its command line still names the fabric's
// agent for `node` (argv[0] or, for an interpreted script, argv[1] is the
// agent binary, and "--node <name>" is among the arguments) — a recycled
// pid is never mistaken for our agent.
bool AgentAlive(SysFs& fs, const std::string& agent_bin, const std::string& node_name, int pid);

// Every live process that is the fabric's agent for `node` (as AgentAlive)
// with `--state-dir state_dir` among its arguments, found by listing /proc:
// how `fabric down` finds an agent whose pid fabric.json does not hold.
// Not one under another root (as FindByCmdline).
std::vector<int> FindAgents(SysFs& fs, const std::string& agent_bin, const std::string& node_name,
                            const std::string& state_dir);

}  // namespace fdrill

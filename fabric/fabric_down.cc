#include "fabric/fabric_down.h"

#include <algorithm>
#include <functional>
#include <sstream>

#include "fabric/agent_supervisor.h"
#include "fabric/inventory.h"
#include "fabric/slurm.h"
#include "fabric/sshd.h"

namespace fdrill {

namespace {

struct Agent {
  std::string node;
  int pid;
};

// The supervisor first, so no agent is started again while they stop:
// SIGTERM, wait up to `grace`, SIGKILL. True when one was running.
bool StopSupervisor(const FabricState& state, const DownOptions& options, const FabricHost& host) {
  const int pid = state.supervisor_pid;
  if (!SupervisorAlive(*host.fs, state.state_dir, pid)) return false;
  (void)host.runner->Run({"kill", "-s", "TERM", std::to_string(pid)}, std::chrono::seconds(5));
  const auto deadline = host.clock->Now() + options.term_grace;
  while (SupervisorAlive(*host.fs, state.state_dir, pid)) {
    if (host.clock->Now() >= deadline) {
      (void)host.runner->Run({"kill", "-s", "KILL", std::to_string(pid)}, std::chrono::seconds(5));
      break;
    }
    host.node->SleepFor(std::chrono::milliseconds(50));
  }
  return true;
}

// SIGTERM, wait up to `grace`, SIGKILL what is left: the agents fabric.json
// names, and any other agent of this fabric still running (one a supervisor
// killed mid-restart started and never recorded).
void StopAgents(const FabricState& state, const DownOptions& options, const FabricHost& host,
                DownReport& report) {
  std::vector<Agent> alive;
  for (const FabricNode* n : state.AgentHosts()) {
    if (AgentAlive(*host.fs, state.agent_bin, n->name, n->agent_pid))
      alive.push_back({n->name, n->agent_pid});
  }
  for (const FabricNode* n : state.AgentHosts()) {
    for (int pid : FindAgents(*host.fs, state.agent_bin, n->name, n->state_dir)) {
      if (pid != n->agent_pid) alive.push_back({n->name, pid});
    }
  }
  if (alive.empty()) return;
  for (const auto& a : alive) {
    (void)host.runner->Run({"kill", "-s", "TERM", std::to_string(a.pid)}, std::chrono::seconds(5));
  }
  report.agents_stopped = static_cast<int>(alive.size());
  auto deadline = host.clock->Now() + options.term_grace;
  for (;;) {
    std::erase_if(alive, [&](const Agent& a) {
      return !AgentAlive(*host.fs, state.agent_bin, a.node, a.pid);
    });
    if (alive.empty() || host.clock->Now() >= deadline) break;
    host.node->SleepFor(std::chrono::milliseconds(100));
  }
  for (const auto& a : alive) {
    (void)host.runner->Run({"kill", "-s", "KILL", std::to_string(a.pid)}, std::chrono::seconds(5));
    ++report.agents_killed;
  }
}

// SIGTERM to every pid, then SIGKILL after the grace to those `alive` still
// says are running. Returns how many there were.
int TermThenKill(std::vector<int> pids, const std::function<bool(int)>& alive,
                 const DownOptions& options, const FabricHost& host) {
  std::erase_if(pids, [&](int pid) { return !alive(pid); });
  for (int pid : pids)
    (void)host.runner->Run({"kill", "-s", "TERM", std::to_string(pid)}, std::chrono::seconds(5));
  const int count = static_cast<int>(pids.size());
  const auto deadline = host.clock->Now() + options.term_grace;
  for (;;) {
    std::erase_if(pids, [&](int pid) { return !alive(pid); });
    if (pids.empty()) break;
    if (host.clock->Now() >= deadline) {
      for (int pid : pids)
        (void)host.runner->Run({"kill", "-s", "KILL", std::to_string(pid)},
                               std::chrono::seconds(5));
      break;
    }
    host.node->SleepFor(std::chrono::milliseconds(50));
  }
  return count;
}

// The fabric's Slurm (`up --slurm`): the slurmds first, then slurmctld, then
// munged (which the others authenticate through), each found by the
// fabric's files on its command line, fabric.json or not. Returns how many.
int StopSlurm(const DownOptions& options, const FabricHost& host) {
  const SlurmFiles files{options.layout.state_dir + "/slurm"};
  int stopped = 0;
  for (const std::string& needle :
       {" -f " + files.Conf() + " -N ", SlurmctldNeedle(files), MungedNeedle(files)}) {
    stopped += TermThenKill(
        FindByCmdline(*host.fs, needle),
        [&](int pid) { return CmdlineContains(*host.fs, pid, needle); }, options, host);
  }
  return stopped;
}

// The nodes' sshds (`up --sshd`): those fabric.json names and any other
// started with this layout's sshd_config. Returns how many there were.
int StopSshds(const Result<FabricState>& state, const DownOptions& options,
              const FabricHost& host) {
  const std::string config = SshFiles{options.layout.state_dir + "/ssh"}.SshdConfig();
  std::vector<int> pids = FindSshds(*host.fs, config);
  if (state.ok()) {
    for (const auto& n : state->nodes) {
      if (std::find(pids.begin(), pids.end(), n.sshd_pid) == pids.end()) pids.push_back(n.sshd_pid);
    }
  }
  return TermThenKill(
      pids, [&](int pid) { return SshdAlive(*host.fs, config, pid); }, options, host);
}

// What still runs in the fabric's namespaces once its agents and sshds are
// stopped (an ssh session's orted and ranks, a process a user started with
// `fabric exec`) would keep a deleted namespace alive: SIGKILL, by pid,
// each process `ip netns pids` lists. Returns how many.
int KillNamespaceProcesses(const std::vector<std::string>& netns, const FabricHost& host) {
  int killed = 0;
  for (const auto& ns : netns) {
    auto pids = RunChecked(*host.runner, {"ip", "netns", "pids", ns});
    if (!pids.ok()) continue;
    std::istringstream in(*pids);
    for (std::string pid; in >> pid;) {
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      (void)host.runner->Run({"kill", "-s", "KILL", pid}, std::chrono::seconds(5));
      ++killed;
    }
  }
  return killed;
}

// A state dir we are willing to `rm -rf`: absolute, at least two levels deep.
bool SafeToRemove(const std::string& dir) {
  return dir.size() > 1 && dir[0] == '/' && std::count(dir.begin(), dir.end(), '/') >= 2 &&
         dir.back() != '/' && dir.find("..") == std::string::npos;
}

}  // namespace

Result<DownReport> FabricDown(const DownOptions& options, const FabricHost& host) {
  const FabricLayout& layout = options.layout;
  if (!SafeToRemove(layout.state_dir))
    return InvalidArgument("refusing state dir " + layout.state_dir);
  DownReport report;
  std::vector<std::string> failures;
  auto note = [&](const Result<std::string>& r, const std::string& what) {
    if (r.ok())
      report.removed.push_back(what);
    else
      failures.push_back(r.status().message());
  };

  auto state = LoadFabricState(*host.fs, layout.state_dir);
  if (state.ok()) {
    report.supervisor_stopped = StopSupervisor(*state, options, host);
    // It may have restarted an agent, and rewritten the pids, since we read.
    if (report.supervisor_stopped) {
      if (auto again = LoadFabricState(*host.fs, layout.state_dir); again.ok()) state = again;
    }
    StopAgents(*state, options, host, report);
  } else if (state.status().code() != StatusCode::kNotFound) {
    failures.push_back(state.status().message() + " (agents, if any, were not stopped)");
  }

  report.sshds_stopped = StopSshds(state, options, host);
  report.slurm_stopped = StopSlurm(options, host);

  auto inv = TakeInventory(layout, *host.runner, *host.fs);
  if (!inv.ok()) return inv.status();
  report.processes_killed = KillNamespaceProcesses(inv->netns, host);
  if (inv->empty() && report.agents_stopped == 0 && report.sshds_stopped == 0 && failures.empty()) {
    report.found_nothing = true;
    return report;
  }
  // Root-side management veths first (each takes its mgmt0 peer with it),
  // then the bridge, then the namespaces with everything inside them.
  // Deleting a namespace destroys its veths asynchronously, so links are
  // not looked for again afterwards.
  std::vector<std::string> links = inv->root_links;
  std::stable_partition(links.begin(), links.end(),
                        [&](const auto& l) { return l != layout.MgmtBridge(); });
  for (const auto& link : links) {
    auto r = RunChecked(*host.runner, {"ip", "link", "del", link});
    bool already_gone =
        !r.ok() && r.status().message().find("Cannot find device") != std::string::npos;
    note(already_gone ? Result<std::string>(std::string()) : r, "link " + link);
  }
  for (const auto& ns : inv->netns)
    note(RunChecked(*host.runner, {"ip", "netns", "del", ns}), "netns " + ns);
  for (const auto& m : inv->mounts) note(RunChecked(*host.runner, {"umount", m}), "mount " + m);
  if (inv->state_dir_exists) {
    note(RunChecked(*host.runner, {"rm", "-rf", "--one-file-system", layout.state_dir}),
         "dir " + layout.state_dir);
    // Its parent when that is fdrill's own (/run/fdrill, which `up` made
    // with mkdir -p) and nothing else is in it.
    const std::string parent = layout.state_dir.substr(0, layout.state_dir.rfind('/'));
    if (parent.size() > 7 && parent.ends_with("/fdrill"))
      (void)host.runner->Run({"rmdir", "--ignore-fail-on-non-empty", parent},
                             std::chrono::seconds(5));
  }
  // The mount points `up` made for the nodes' own files; one that holds
  // something now is someone's (a package installed since) and stays.
  if (state.ok()) {
    for (const auto& dir : state->made_dirs)
      note(RunChecked(*host.runner, {"rmdir", "--ignore-fail-on-non-empty", dir}), "dir " + dir);
  }
  if (!failures.empty()) {
    std::string message = "fabric down left things behind:";
    for (const auto& f : failures) message += "\n  " + f;
    return FailedPrecondition(message);
  }
  return report;
}

}  // namespace fdrill

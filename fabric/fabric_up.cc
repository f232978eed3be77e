#include "fabric/fabric_up.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include "common/core/units.h"
#include "common/host/programs.h"
#include "common/tls/certs.h"
#include "fabric/fabric_status.h"
#include "fabric/fabric_topology.h"
#include "fabric/inventory.h"
#include "fabric/node_enter.h"
#include "fabric/slurm.h"
#include "fabric/sshd.h"
#include "fabric/up_support.h"

namespace fdrill {

namespace {

Status WaitForAgents(const FabricState& state, const UpOptions& options, const FabricHost& host) {
  const std::vector<const FabricNode*> hosts = state.AgentHosts();
  std::set<size_t> pending;
  for (size_t i = 0; i < hosts.size(); ++i) pending.insert(i);
  auto deadline = host.clock->Now() + options.ready_timeout;
  for (;;) {
    for (auto it = pending.begin(); it != pending.end();) {
      const FabricNode& n = *hosts[*it];
      if (host.node->TcpConnects(n.MgmtIp(), n.agent_port, std::chrono::milliseconds(200))) {
        it = pending.erase(it);
        continue;
      }
      if (!AgentAlive(*host.fs, state.agent_bin, n.name, n.agent_pid)) {
        return Unavailable("agent on " + n.name + " (pid " + std::to_string(n.agent_pid) +
                           ") exited; " + LogTail(*host.fs, n.agent_log));
      }
      ++it;
    }
    if (pending.empty()) return Status::Ok();
    if (host.clock->Now() >= deadline) {
      const FabricNode& n = *hosts[*pending.begin()];
      return DeadlineExceeded(
          std::to_string(pending.size()) + " agent(s) did not accept a connection within " +
          FormatDuration(options.ready_timeout) + ", first " + n.name + " on " + n.MgmtIp() + ":" +
          std::to_string(n.agent_port) + "; " + LogTail(*host.fs, n.agent_log));
    }
    host.node->SleepFor(std::chrono::milliseconds(100));
  }
}

// A veth whose peer comes up gets its carrier at once, but its operstate
// (what `ip link` prints as "state", and what a bridge checks before it
// forwards on a port) follows later, from the kernel's linkwatch work —
// measured here up to ~1 s after the last step (a spine's dn0 read
// "NO-CARRIER ... state DOWN" right after up, "state UP" 2 s later). So `up`
// returns only once no switch port, and no node's mgmt0 or fab<r>, reads
// DOWN, and a drill started right after it never begins on a port the
// bridge still holds disabled.
Status WaitForPorts(const FabricState& state, const UpOptions& options, const FabricHost& host) {
  const auto deadline = host.clock->Now() + options.ready_timeout;
  for (;;) {
    std::vector<std::string> down;
    for (const auto& sw : state.switches) {
      auto out = RunChecked(*host.runner, {"ip", "-n", sw.netns, "-o", "link", "show"});
      if (!out.ok()) return out.status().Annotate("reading " + sw.name + "'s ports");
      for (const auto& [name, link_state] : ParseLinkStates(*out)) {
        if (link_state == "DOWN" && sw.FindPort(name) != nullptr)
          down.push_back(sw.name + ":" + name);
      }
    }
    // The nodes' own ends too: mgmt0 (what the agent and sshd listen on)
    // and each rail's fab<r>.
    for (const auto& n : state.nodes) {
      auto out = RunChecked(*host.runner, {"ip", "-n", n.netns, "-o", "link", "show"});
      if (!out.ok()) return out.status().Annotate("reading " + n.name + "'s links");
      for (const auto& [name, link_state] : ParseLinkStates(*out)) {
        bool ours = name == n.mgmt_if;
        for (const auto& port : n.fabric) ours = ours || name == port.ifname;
        if (link_state == "DOWN" && ours) down.push_back(n.name + ":" + name);
      }
    }
    if (down.empty()) return Status::Ok();
    if (host.clock->Now() >= deadline) {
      std::string list;
      for (const auto& d : down) list += (list.empty() ? "" : ", ") + d;
      return DeadlineExceeded(std::to_string(down.size()) + " switch port(s) still DOWN " +
                              FormatDuration(options.ready_timeout) + " after the fabric was " +
                              "built: " + list);
    }
    host.node->SleepFor(std::chrono::milliseconds(100));
  }
}

// A CA made for this fabric alone, and a cert for the controller and each
// node. The files go under the state dir, so `down` removes them with it.
Status MakePki(const FabricState& state, const FabricHost& host, Rollback& rollback) {
  const std::string& dir = state.pki_dir;
  if (Status s = rollback.Run({{"install", "-d", "-m", "0700", dir}, {}}); !s.ok()) return s;
  auto ca = MakeCa("fdrill emulated fabric CA");
  if (!ca.ok()) return ca.status().Annotate("making the fabric's CA");
  auto write = [&](const std::string& name, const PemPair& pair) {
    if (Status s = host.fs->WriteSecret(dir + "/" + name + ".key", pair.key); !s.ok()) return s;
    return host.fs->Write(dir + "/" + name + ".pem", pair.cert);
  };
  if (Status s = write("ca", *ca); !s.ok()) return s;
  // The controller's (drives drills), a read-only observer's (inventory),
  // and one server-only certificate per agent (common/tls/certs.h).
  std::vector<std::pair<std::string, CertRole>> names = {{"controller", CertRole::kController},
                                                         {"observer", CertRole::kObserver}};
  for (const FabricNode* n : state.AgentHosts()) names.push_back({n->name, CertRole::kNode});
  for (const auto& [name, role] : names) {
    auto leaf = MakeLeaf(*ca, name, role);
    if (!leaf.ok()) return leaf.status().Annotate("certificate for " + name);
    if (Status s = write(name, *leaf); !s.ok()) return s;
  }
  return Status::Ok();
}

// Last, once every agent is ready: an agent that cannot start fails `up`
// with its log rather than being restarted. The supervisor waits until
// fabric.json names it (agent_supervisor.h), so it starts supervising only
// after this save.
Status StartSupervisor(FabricState& state, const UpOptions& options, const FabricHost& host,
                       Rollback& rollback) {
  if (options.supervisor_argv.empty()) return Status::Ok();
  auto pid = SpawnOrUndo(host, {options.supervisor_argv, "", "", "", SupervisorLogPath(state)},
                         rollback, "starting the agents' supervisor");
  if (!pid.ok()) return pid.status();
  state.supervisor_pid = *pid;
  return SaveFabricState(*host.fs, state);
}

// --sshd and --slurm.
Status StartDaemons(FabricState& state, const UpOptions& options, const FabricHost& host,
                    Rollback& rollback) {
  if (options.sshd) {
    if (Status s = StartSshds(state, options, host, rollback); !s.ok()) return s;
  }
  if (options.slurm) {
    if (Status s = StartSlurm(state, options, host, rollback); !s.ok()) return s;
  }
  return Status::Ok();
}

// The machine's /etc/fdrill and /var/lib/fdrill are where the nodes' own
// are bound (node_enter.h); a missing one is made, recorded in the state
// and removed again by `down` (or the rollback) when empty.
Status MakeMountPoints(FabricState& state, const FabricHost& host, Rollback& rollback) {
  for (const std::string& dir : kNodeLocalDirs) {
    if (host.fs->Exists(dir)) continue;
    if (Status s =
            rollback.Run({{"mkdir", "-p", dir}, {"rmdir", "--ignore-fail-on-non-empty", dir}});
        !s.ok())
      return s;
    state.made_dirs.push_back(dir);
  }
  return Status::Ok();
}

Status Build(FabricState& state, const UpOptions& options, const FabricHost& host,
             Rollback& rollback) {
  for (const auto& step : BuildSteps(state)) {
    if (Status s = rollback.Run(step); !s.ok()) return s;
  }
  if (Status s = MakeMountPoints(state, host, rollback); !s.ok()) return s;
  if (!state.pki_dir.empty()) {
    if (Status s = MakePki(state, host, rollback); !s.ok()) return s;
  }
  if (Status s = SaveFabricState(*host.fs, state); !s.ok()) return s;
  if (Status s = host.fs->Write(TopologyPath(state.state_dir), TopologyYaml(state.shape)); !s.ok())
    return s;
  if (!options.agents) return StartDaemons(state, options, host, rollback);
  for (FabricNode* n : state.AgentHosts()) {
    auto pid = SpawnOrUndo(host, InNode(*n, AgentArgv(state, *n), n->agent_log), rollback,
                           "starting the agent on " + n->name);
    if (!pid.ok()) return pid.status();
    n->agent_pid = *pid;
  }
  if (Status s = SaveFabricState(*host.fs, state); !s.ok()) return s;
  if (options.wait_ready) {
    if (Status s = WaitForAgents(state, options, host); !s.ok()) return s;
    if (Status s = WaitForPorts(state, options, host); !s.ok()) return s;
  }
  if (Status s = StartDaemons(state, options, host, rollback); !s.ok()) return s;
  return StartSupervisor(state, options, host, rollback);
}

}  // namespace

namespace {

// The modelled egress capacity of a switch port: a tbf root qdisc, handle 1:
// (a fault's qdiscs use fd1:), burst as link_rate's (DefaultTbfBurstBytes),
// over an explicit bfifo 10: holding 20 ms of rate plus the burst (a switch
// buffer's order of magnitude; what tbf's own `latency 20ms` would size its
// built-in queue to). The explicit queue is what lets a fault cap the port
// without touching its tbf: link_rate swaps the fifo for its own tbf and
// puts the fifo back exactly (injectors/link_rate.cc).
void AddShape(std::vector<FabricStep>& steps, const std::string& netns, const SwitchPort& port) {
  const uint64_t burst = DefaultTbfBurstBytes(port.rate_bps);
  const uint64_t queue = port.rate_bps / 8 / 50 + burst;
  steps.push_back({{"tc", "-n", netns, "qdisc", "replace", "dev", port.name, "root", "handle",
                    "1:", "tbf", "rate", std::to_string(port.rate_bps) + "bit", "burst",
                    std::to_string(burst), "latency", "20ms"},
                   {}});
  steps.push_back({{"tc", "-n", netns, "qdisc", "replace", "dev", port.name, "parent", "1:1",
                    "handle", "10:", "bfifo", "limit", std::to_string(queue)},
                   {}});
}

void AddBridgePort(std::vector<FabricStep>& steps, const FabricSwitch& sw,
                   const std::string& port) {
  steps.push_back({{"ip", "-n", sw.netns, "link", "set", port, "master", sw.bridge}, {}});
  steps.push_back({{"ip", "-n", sw.netns, "link", "set", port, "up"}, {}});
}

// A host's management veth on the bridge `br`, its address, and its own UTS
// namespace with its name as hostname.
void AddManagement(std::vector<FabricStep>& steps, const std::string& br, const FabricNode& n) {
  const std::string& ns = n.netns;
  std::vector<FabricStep> more = {
      {{"ip", "link", "add", n.mgmt_peer, "type", "veth", "peer", "name", n.mgmt_if, "netns", ns},
       {"ip", "link", "del", n.mgmt_peer}},
      {{"ip", "link", "set", n.mgmt_peer, "master", br}, {}},
      {{"ip", "link", "set", n.mgmt_peer, "up"}, {}},
      {{"ip", "-n", ns, "addr", "add", n.mgmt_addr, "dev", n.mgmt_if}, {}},
      {{"ip", "-n", ns, "link", "set", n.mgmt_if, "up"}, {}},
      // unshare needs the mount point to exist; it bind-mounts the new UTS
      // namespace there, then runs hostname inside it.
      {{"touch", n.uts_path}, {}},
      {{"unshare", "--uts=" + n.uts_path, "hostname", n.name}, {"umount", n.uts_path}, true},
  };
  for (auto& step : more) steps.push_back(std::move(step));
}

}  // namespace

std::vector<FabricStep> BuildSteps(const FabricState& s) {
  const std::string& br = s.mgmt_bridge;
  std::vector<FabricStep> steps = {
      {{"mkdir", "-p", s.state_dir}, {"rm", "-rf", "--one-file-system", s.state_dir}},
      {{"ip", "link", "add", br, "type", "bridge"}, {"ip", "link", "del", br}},
      {{"ip", "addr", "add", s.controller_addr, "dev", br}, {}},
      {{"ip", "link", "set", br, "up"}, {}},
  };
  for (const auto& sw : s.switches) {
    steps.push_back({{"ip", "netns", "add", sw.netns}, {"ip", "netns", "del", sw.netns}});
    steps.push_back({{"ip", "-n", sw.netns, "link", "add", sw.bridge, "type", "bridge"}, {}});
    steps.push_back({{"ip", "-n", sw.netns, "link", "set", sw.bridge, "up"}, {}});
  }
  // Uplinks: a leaf's up0 <-> its spine's dn<l>, created in both namespaces.
  for (const auto& leaf : s.switches) {
    const SwitchPort* up = leaf.FindPort("up0");
    if (up == nullptr) continue;
    const std::string spine_name = up->peer.substr(0, up->peer.find(':'));
    const std::string spine_port = up->peer.substr(up->peer.find(':') + 1);
    const FabricSwitch* spine = s.FindSwitch(spine_name);
    if (spine == nullptr) continue;  // PlanFabric always makes it
    steps.push_back({{"ip", "link", "add", up->name, "netns", leaf.netns, "type", "veth", "peer",
                      "name", spine_port, "netns", spine->netns},
                     {}});
    AddBridgePort(steps, leaf, up->name);
    AddBridgePort(steps, *spine, spine_port);
  }
  for (const auto& n : s.nodes) {
    const std::string& ns = n.netns;
    std::vector<std::string> mkdir = {"mkdir", "-p", n.tmpdir, n.state_dir};
    if (!n.files_root.empty())
      for (const std::string& dir : kNodeLocalDirs) mkdir.push_back(n.files_root + dir);
    steps.push_back({mkdir, {}});
    steps.push_back({{"ip", "netns", "add", ns}, {"ip", "netns", "del", ns}});
    steps.push_back({{"ip", "-n", ns, "link", "set", "lo", "up"}, {}});
    for (const auto& port : n.fabric) {
      const FabricSwitch* leaf = s.FindSwitch(port.leaf);
      if (leaf == nullptr) continue;  // PlanFabric always makes it
      steps.push_back({{"ip", "link", "add", port.leaf_port, "netns", leaf->netns, "type", "veth",
                        "peer", "name", port.ifname, "netns", ns},
                       {}});
      AddBridgePort(steps, *leaf, port.leaf_port);
      steps.push_back({{"ip", "-n", ns, "addr", "add", port.addr, "dev", port.ifname}, {}});
      steps.push_back({{"ip", "-n", ns, "link", "set", port.ifname, "up"}, {}});
    }
    AddManagement(steps, br, n);
  }
  // The switches' management sides, after the nodes': node i keeps
  // .<i+1> and its place in the step order whatever the shape.
  for (const auto& sw : s.switches) {
    steps.push_back({{"mkdir", "-p", sw.agent.tmpdir, sw.agent.state_dir}, {}});
    steps.push_back({{"ip", "-n", sw.netns, "link", "set", "lo", "up"}, {}});
    AddManagement(steps, br, sw.agent);
  }
  // Capacity last: every port exists by now.
  for (const auto& sw : s.switches) {
    for (const auto& port : sw.ports)
      if (port.rate_bps > 0) AddShape(steps, sw.netns, port);
  }
  return steps;
}

std::vector<std::string> AgentArgv(const FabricState& state, const FabricNode& node) {
  std::vector<std::string> argv = {state.agent_bin,
                                   "--node",
                                   node.name,
                                   "--listen",
                                   node.MgmtIp() + ":" + std::to_string(node.agent_port),
                                   "--state-dir",
                                   node.state_dir};
  // A switch's agent may touch its ports and its bridge and nothing else: no process or
  // host faults (`ranks`, `cpu`, `memory` are not allowed), never mgmt0.
  if (const FabricSwitch* sw = state.FindSwitch(node.name); sw != nullptr && &sw->agent == &node) {
    for (const auto& port : sw->ports) argv.insert(argv.end(), {"--allow", port.name});
    argv.insert(argv.end(), {"--allow", sw->bridge});  // switch_down's target
  }
  if (state.pki_dir.empty()) {
    argv.push_back("--insecure");
  } else {
    const std::string& p = state.pki_dir;
    argv.insert(argv.end(), {"--tls-ca", p + "/ca.pem", "--tls-cert", p + "/" + node.name + ".pem",
                             "--tls-key", p + "/" + node.name + ".key"});
  }
  return argv;
}

Status CheckNoFabric(const FabricLayout& layout, const FabricHost& host) {
  auto inv = TakeInventory(layout, *host.runner, *host.fs);
  if (!inv.ok()) return inv.status();
  if (inv->empty() && !inv->state_file_exists) return Status::Ok();
  int nodes = inv->NodeCount(layout);
  if (auto state = LoadFabricState(*host.fs, layout.state_dir); state.ok()) {
    nodes = static_cast<int>(state->nodes.size());
  }
  if (nodes > 0 || inv->state_file_exists) {
    return FailedPrecondition("fabric already up with " + std::to_string(nodes) +
                              " nodes; run `fdrill fabric down` first");
  }
  return FailedPrecondition("leftovers of a fabric exist (" + std::to_string(inv->netns.size()) +
                            " namespaces, " + std::to_string(inv->root_links.size()) +
                            " links, state dir " + layout.state_dir +
                            "); run `fdrill fabric down` first");
}

Result<std::string> FreeMgmtNet(ProcessRunner& runner) {
  auto out = RunChecked(runner, {"ip", "-4", "-o", "addr", "show"});
  if (!out.ok()) return out.status().Annotate("choosing a management network");
  std::set<int> taken;
  std::istringstream lines(*out);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find(" inet 198.19.");
    if (at == std::string::npos) continue;
    taken.insert(std::atoi(line.c_str() + at + 13));
  }
  for (int k = kFirstNamedMgmtNet; k <= kLastNamedMgmtNet; ++k)
    if (!taken.count(k)) return "198.19." + std::to_string(k);
  return FailedPrecondition("every management network 198.19." +
                            std::to_string(kFirstNamedMgmtNet) + ".0/24 to 198.19." +
                            std::to_string(kLastNamedMgmtNet) +
                            ".0/24 is in use on this machine: take a fabric down first");
}

Status CheckRoomFor(const FabricShape& shape, SysFs& fs) {
  auto meminfo = fs.Read("/proc/meminfo");
  if (!meminfo.ok()) return Status::Ok();  // nothing to go by: let the kernel say
  const auto at = meminfo->find("MemAvailable:");
  if (at == std::string::npos) return Status::Ok();
  const uint64_t available_kib = std::strtoull(meminfo->c_str() + at + 13, nullptr, 10);
  const uint64_t needed_kib = uint64_t{kMemoryPerNodeMiB} * 1024 * shape.nodes;
  if (available_kib >= needed_kib) return Status::Ok();
  return FailedPrecondition(
      "--nodes " + std::to_string(shape.nodes) + " needs about " +
      std::to_string(needed_kib / 1024) + " MiB (" + std::to_string(kMemoryPerNodeMiB) +
      " MiB a node: its agent, namespaces and a rank of the workload) and this machine has " +
      std::to_string(available_kib / 1024) +
      " MiB available (/proc/meminfo); use at most --nodes " +
      std::to_string(available_kib / 1024 / kMemoryPerNodeMiB));
}

Result<FabricState> FabricUp(const UpOptions& options, const FabricHost& host) {
  auto planned = PlanFabric(options.layout, options.shape, options.agent_bin);
  if (!planned.ok()) return planned.status();
  if (Status s = CheckRoomFor(options.shape, *host.fs); !s.ok()) return s;
  if (Status s = CheckNoFabric(options.layout, host); !s.ok()) return s;
  FabricState state = std::move(planned).value();
  if (!options.insecure) state.pki_dir = options.layout.PkiDir();
  if (options.sshd) {
    if (options.sshd_bin.empty() || options.keygen_bin.empty())
      return InvalidArgument(
          "--sshd: the sshd and ssh-keygen paths are not set (CheckSshdInstalled)");
    state.ssh_dir = options.layout.state_dir + "/ssh";
  }
  if (options.slurm) {
    if (options.slurm_bin.slurmd.empty())
      return InvalidArgument("--slurm: the Slurm programs are not set (CheckSlurmInstalled)");
    state.slurm_dir = options.layout.state_dir + "/slurm";
  }
  Rollback rollback(*host.runner);
  Status built = Build(state, options, host, rollback);
  if (built.ok()) return state;
  std::vector<std::string> leftovers = rollback.Unwind();
  std::string message = "fabric up failed: " + built.message();
  if (leftovers.empty()) {
    message += "\n(rolled back: nothing of the fabric is left)";
  } else {
    message += "\nrollback left things behind; run `fdrill fabric down`:";
    for (const auto& l : leftovers) message += "\n  " + l;
  }
  return Status(built.code(), message);
}

}  // namespace fdrill

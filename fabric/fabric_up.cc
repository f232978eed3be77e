#include "fabric/fabric_up.h"

#include <set>

#include "fabric/inventory.h"
#include "harness/tls/certs.h"

namespace fdrill {

namespace {

using Argv = std::vector<std::string>;

// Runs steps and remembers how to undo what succeeded.
class Rollback {
 public:
  explicit Rollback(ProcessRunner& runner) : runner_(runner) {}

  Status Run(const FabricStep& step) {
    auto r = RunChecked(runner_, step.argv);
    if (!step.undo.empty() && (r.ok() || step.undo_if_failed)) undo_.push_back(step.undo);
    return r.ok() ? Status::Ok() : r.status();
  }
  void Add(Argv undo) { undo_.push_back(std::move(undo)); }

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
  std::vector<Argv> undo_;
};

std::string LogTail(SysFs& fs, const std::string& path) {
  auto text = fs.Read(path);
  if (!text.ok() || text->empty()) return "(" + path + " is empty)";
  std::string t = *text;
  if (t.size() > 600) t = "..." + t.substr(t.size() - 600);
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return path + ":\n" + t;
}

Status WaitForAgents(const FabricState& state, const UpOptions& options, const FabricHost& host) {
  std::set<size_t> pending;
  for (size_t i = 0; i < state.nodes.size(); ++i) pending.insert(i);
  auto deadline = host.clock->Now() + options.ready_timeout;
  for (;;) {
    for (auto it = pending.begin(); it != pending.end();) {
      const FabricNode& n = state.nodes[*it];
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
      const FabricNode& n = state.nodes[*pending.begin()];
      return DeadlineExceeded(
          std::to_string(pending.size()) + " agent(s) did not accept a connection within " +
          FormatDuration(options.ready_timeout) + ", first " + n.name + " on " + n.MgmtIp() + ":" +
          std::to_string(n.agent_port) + "; " + LogTail(*host.fs, n.agent_log));
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
    if (Status s = host.fs->Write(dir + "/" + name + ".key", pair.key); !s.ok()) return s;
    return host.fs->Write(dir + "/" + name + ".pem", pair.cert);
  };
  if (Status s = write("ca", *ca); !s.ok()) return s;
  std::vector<std::string> names = {"controller"};
  for (const auto& n : state.nodes) names.push_back(n.name);
  for (const auto& name : names) {
    auto leaf = MakeLeaf(*ca, name);
    if (!leaf.ok()) return leaf.status().Annotate("certificate for " + name);
    if (Status s = write(name, *leaf); !s.ok()) return s;
  }
  return Status::Ok();
}

Status Build(FabricState& state, const UpOptions& options, const FabricHost& host,
             Rollback& rollback) {
  for (const auto& step : BuildSteps(state)) {
    if (Status s = rollback.Run(step); !s.ok()) return s;
  }
  if (!state.pki_dir.empty()) {
    if (Status s = MakePki(state, host, rollback); !s.ok()) return s;
  }
  if (Status s = SaveFabricState(*host.fs, state); !s.ok()) return s;
  for (auto& n : state.nodes) {
    SpawnSpec spec{AgentArgv(state, n), n.NetnsPath(), n.uts_path, n.tmpdir, n.agent_log};
    auto pid = host.node->Spawn(spec);
    if (!pid.ok()) return pid.status().Annotate("starting the agent on " + n.name);
    n.agent_pid = *pid;
    rollback.Add({"kill", "-s", "KILL", std::to_string(*pid)});
  }
  if (Status s = SaveFabricState(*host.fs, state); !s.ok()) return s;
  if (options.wait_ready) return WaitForAgents(state, options, host);
  return Status::Ok();
}

}  // namespace

std::vector<FabricStep> BuildSteps(const FabricState& s) {
  const std::string& br = s.mgmt_bridge;
  const std::string& sw = s.switch_netns;
  const std::string& swbr = s.switch_bridge;
  std::vector<FabricStep> steps = {
      {{"mkdir", "-p", s.state_dir}, {"rm", "-rf", "--one-file-system", s.state_dir}},
      {{"ip", "link", "add", br, "type", "bridge"}, {"ip", "link", "del", br}},
      {{"ip", "addr", "add", s.controller_addr, "dev", br}, {}},
      {{"ip", "link", "set", br, "up"}, {}},
      {{"ip", "netns", "add", sw}, {"ip", "netns", "del", sw}},
      {{"ip", "-n", sw, "link", "add", swbr, "type", "bridge"}, {}},
      {{"ip", "-n", sw, "link", "set", swbr, "up"}, {}},
  };
  for (const auto& n : s.nodes) {
    const std::string& ns = n.netns;
    std::vector<FabricStep> node_steps = {
        {{"mkdir", "-p", n.tmpdir, n.state_dir}, {}},
        {{"ip", "netns", "add", ns}, {"ip", "netns", "del", ns}},
        {{"ip", "-n", ns, "link", "set", "lo", "up"}, {}},
        {{"ip", "link", "add", n.switch_port, "netns", sw, "type", "veth", "peer", "name",
          n.fabric_if, "netns", ns},
         {}},
        {{"ip", "-n", sw, "link", "set", n.switch_port, "master", swbr}, {}},
        {{"ip", "-n", sw, "link", "set", n.switch_port, "up"}, {}},
        {{"ip", "-n", ns, "addr", "add", n.fabric_addr, "dev", n.fabric_if}, {}},
        {{"ip", "-n", ns, "link", "set", n.fabric_if, "up"}, {}},
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
    for (auto& step : node_steps) steps.push_back(std::move(step));
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

Result<FabricState> FabricUp(const UpOptions& options, const FabricHost& host) {
  auto planned = PlanFabric(options.layout, options.nodes, options.agent_bin);
  if (!planned.ok()) return planned.status();
  if (Status s = CheckNoFabric(options.layout, host); !s.ok()) return s;
  FabricState state = std::move(planned).value();
  if (!options.insecure) state.pki_dir = options.layout.PkiDir();
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

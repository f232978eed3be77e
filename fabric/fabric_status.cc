#include "fabric/fabric_status.h"

#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/core/json.h"
#include "common/core/units.h"
#include "fabric/agent_supervisor.h"
#include "fabric/inventory.h"
#include "fabric/slurm.h"
#include "fabric/sshd.h"

namespace fdrill {

namespace {

std::map<std::string, std::string> LinkStatesIn(ProcessRunner& runner, const std::string& netns) {
  std::map<std::string, std::string> states;
  auto out = RunChecked(runner, {"ip", "-n", netns, "-o", "link", "show"});
  if (!out.ok()) return states;  // namespace gone: every link reads "missing"
  for (auto& [name, state] : ParseLinkStates(*out)) states[name] = state;
  return states;
}

std::string StateOf(const std::map<std::string, std::string>& states, const std::string& link) {
  auto it = states.find(link);
  return it == states.end() ? "missing" : it->second;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ParseLinkStates(const std::string& out) {
  std::vector<std::pair<std::string, std::string>> result;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    auto names = ParseLinkNames(line);
    if (names.empty()) continue;
    std::string state = "UNKNOWN";
    auto at = line.find(" state ");
    if (at != std::string::npos) {
      std::string rest = line.substr(at + 7);
      state = rest.substr(0, rest.find(' '));
    }
    result.emplace_back(names[0], state);
  }
  return result;
}

Result<FabricStatus> GetFabricStatus(const std::string& state_dir, const FabricHost& host) {
  auto state = LoadFabricState(*host.fs, state_dir);
  if (!state.ok()) return state.status();
  FabricStatus status;
  status.state = std::move(state).value();
  status.supervisor_alive =
      SupervisorAlive(*host.fs, status.state.state_dir, status.state.supervisor_pid);
  if (!status.state.slurm_dir.empty()) {
    const SlurmFiles files = SlurmFilesOf(status.state);
    status.munged_alive = CmdlineContains(*host.fs, status.state.munged_pid, MungedNeedle(files));
    status.slurmctld_alive =
        CmdlineContains(*host.fs, status.state.slurmctld_pid, SlurmctldNeedle(files));
  }
  std::map<std::string, std::map<std::string, std::string>> by_switch;
  for (const auto& sw : status.state.switches)
    by_switch[sw.name] = LinkStatesIn(*host.runner, sw.netns);
  for (const auto& n : status.state.nodes) {
    auto in_node = LinkStatesIn(*host.runner, n.netns);
    NodeStatus ns;
    ns.node = n;
    ns.agent_alive = AgentAlive(*host.fs, status.state.agent_bin, n.name, n.agent_pid);
    if (!status.state.ssh_dir.empty())
      ns.sshd_alive = SshdAlive(*host.fs, SshFilesOf(status.state).SshdConfig(), n.sshd_pid);
    if (!status.state.slurm_dir.empty()) {
      ns.slurmd_alive =
          CmdlineContains(*host.fs, n.slurmd_pid, SlurmdNeedle(SlurmFilesOf(status.state), n.name));
    }
    for (const auto& port : n.fabric) {
      ns.fabric_links.push_back(StateOf(in_node, port.ifname));
      ns.switch_ports.push_back(StateOf(by_switch[port.leaf], port.leaf_port));
    }
    ns.mgmt_link = StateOf(in_node, n.mgmt_if);
    status.nodes.push_back(ns);
  }
  for (const auto& sw : status.state.switches) {
    if (sw.agent.agent_pid > 0) {
      NodeStatus as;
      as.node = sw.agent;
      as.agent_alive = AgentAlive(*host.fs, status.state.agent_bin, sw.name, sw.agent.agent_pid);
      as.mgmt_link = StateOf(by_switch[sw.name], sw.agent.mgmt_if);
      status.switch_agents.push_back(as);
    }
    for (const auto& port : sw.ports) {
      if (port.name.rfind("swp", 0) == 0) continue;  // node ports: in the node rows
      status.uplinks.push_back(
          {sw.name + ":" + port.name, port.peer, StateOf(by_switch[sw.name], port.name)});
    }
  }
  return status;
}

std::string RenderStatusTable(const FabricStatus& status) {
  const FabricState& s = status.state;
  const FabricShape& shape = s.shape;
  std::string out = fmt::format("fabric: {} nodes", s.nodes.size());
  if (!shape.Flat()) {
    out += fmt::format(" x {} rail(s), {} leaf switch(es) per rail", shape.rails, shape.leaves);
  }
  if (shape.port_rate_bps > 0) {
    out += fmt::format(", ports {}", FormatRate(shape.port_rate_bps));
    if (shape.leaves > 1)
      out += fmt::format(", uplinks {} ({}:1)", FormatRate(shape.UplinkRateBps()),
                         shape.oversubscription);
  }
  out += fmt::format(", management bridge {} ({}), agent {}\n", s.mgmt_bridge, s.controller_addr,
                     s.agent_bin);
  if (s.supervisor_pid > 0) {
    out += fmt::format("supervisor: pid {} {} (restarts dead agents; log {})\n", s.supervisor_pid,
                       status.supervisor_alive ? "alive" : "DEAD: agents that die stay dead",
                       s.state_dir + "/supervisor.log");
  } else {
    out += "supervisor: none (agents that die stay dead)\n";
  }
  const bool sshd = !s.ssh_dir.empty();
  const bool slurm = !s.slurm_dir.empty();
  if (slurm) {
    out += fmt::format(
        "slurm: munged pid {} {}, slurmctld pid {} {} on {}:{} (SLURM_CONF={}/slurm.conf)\n",
        s.munged_pid, status.munged_alive ? "alive" : "DEAD", s.slurmctld_pid,
        status.slurmctld_alive ? "alive" : "DEAD", kSlurmctldHost, kSlurmctldPort, s.slurm_dir);
  }
  if (sshd) {
    out += fmt::format("sshd: on every node's management address, port {} (ssh -F {}/config n0)\n",
                       kSshPort, s.ssh_dir);
  }
  // Per rail: the node's fab<r> state, then its leaf port's (swp<i>).
  std::string header = fmt::format("{:<6} {:<16} {:<16} {:<16} {:<8}", "NODE", "MGMT", "FABRIC",
                                   "AGENT", "RESTARTS");
  if (sshd) header += fmt::format(" {:<14}", "SSHD");
  if (slurm) header += fmt::format(" {:<14}", "SLURMD");
  for (int r = 0; r < shape.rails; ++r)
    header += fmt::format(" {:<8} {:<8}", "fab" + std::to_string(r), "swp");
  out += header + fmt::format(" {:<8}\n", "mgmt0");
  for (const auto& n : status.nodes) {
    std::string agent = n.node.agent_pid > 0 ? fmt::format("{} {}", n.node.agent_pid,
                                                           n.agent_alive ? "alive" : "dead")
                                             : "not started";
    std::string row = fmt::format("{:<6} {:<16} {:<16} {:<16} {:<8}", n.node.name, n.node.mgmt_addr,
                                  n.node.fabric.empty() ? "" : n.node.fabric[0].addr, agent,
                                  n.node.agent_restarts);
    if (sshd) {
      row += fmt::format(
          " {:<14}", n.node.sshd_pid > 0
                         ? fmt::format("{} {}", n.node.sshd_pid, n.sshd_alive ? "alive" : "dead")
                         : "not started");
    }
    if (slurm) {
      row += fmt::format(" {:<14}", n.node.slurmd_pid > 0
                                        ? fmt::format("{} {}", n.node.slurmd_pid,
                                                      n.slurmd_alive ? "alive" : "dead")
                                        : "not started");
    }
    for (size_t r = 0; r < n.fabric_links.size(); ++r)
      row += fmt::format(" {:<8} {:<8}", n.fabric_links[r], n.switch_ports[r]);
    out += row + fmt::format(" {:<8}\n", n.mgmt_link);
  }
  if (!status.switch_agents.empty()) {
    out += fmt::format("{:<14} {:<16} {:<16} {:<8} {:<8}\n", "SWITCH", "MGMT", "AGENT", "RESTARTS",
                       "mgmt0");
    for (const auto& a : status.switch_agents) {
      out += fmt::format("{:<14} {:<16} {:<16} {:<8} {:<8}\n", a.node.name, a.node.mgmt_addr,
                         fmt::format("{} {}", a.node.agent_pid, a.agent_alive ? "alive" : "dead"),
                         a.node.agent_restarts, a.mgmt_link);
    }
  }
  if (!status.uplinks.empty()) {
    out += fmt::format("{:<20} {:<20} {:<8}\n", "UPLINK", "PEER", "STATE");
    for (const auto& u : status.uplinks)
      out += fmt::format("{:<20} {:<20} {:<8}\n", u.port, u.peer, u.state);
  }
  return out;
}

std::string RenderStatusJson(const FabricStatus& status) {
  auto j = nlohmann::json::parse(FabricStateToJson(status.state));
  j["supervisor_alive"] = status.supervisor_alive;
  if (!status.state.slurm_dir.empty()) {
    j["munged_alive"] = status.munged_alive;
    j["slurmctld_alive"] = status.slurmctld_alive;
  }
  for (size_t i = 0; i < status.nodes.size(); ++i) {
    const NodeStatus& n = status.nodes[i];
    auto& jn = j["nodes"][i];
    jn["agent_alive"] = n.agent_alive;
    if (!status.state.ssh_dir.empty()) jn["sshd_alive"] = n.sshd_alive;
    if (!status.state.slurm_dir.empty()) jn["slurmd_alive"] = n.slurmd_alive;
    // Node-side links by name, switch-side by "switch:port".
    nlohmann::json links = {{n.node.mgmt_if, n.mgmt_link}};
    for (size_t r = 0; r < n.node.fabric.size(); ++r) {
      const NodePort& port = n.node.fabric[r];
      links[port.ifname] = n.fabric_links[r];
      links[port.leaf + ":" + port.leaf_port] = n.switch_ports[r];
    }
    jn["links"] = links;
  }
  nlohmann::json uplinks = nlohmann::json::object();
  for (const auto& u : status.uplinks) uplinks[u.port] = u.state;
  j["uplinks"] = uplinks;
  return DumpJson(j, 2) + "\n";
}

}  // namespace fdrill

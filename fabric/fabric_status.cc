#include "fabric/fabric_status.h"

#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fabric/inventory.h"

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
  auto sw = LinkStatesIn(*host.runner, status.state.switch_netns);
  for (const auto& n : status.state.nodes) {
    auto in_node = LinkStatesIn(*host.runner, n.netns);
    NodeStatus ns;
    ns.node = n;
    ns.agent_alive = AgentAlive(*host.fs, status.state.agent_bin, n.name, n.agent_pid);
    ns.fabric_link = StateOf(in_node, n.fabric_if);
    ns.switch_port = StateOf(sw, n.switch_port);
    ns.mgmt_link = StateOf(in_node, n.mgmt_if);
    status.nodes.push_back(ns);
  }
  return status;
}

std::string RenderStatusTable(const FabricStatus& status) {
  const FabricState& s = status.state;
  std::string out =
      fmt::format("fabric: {} nodes, switch netns {}, management bridge {} ({}), agent {}\n",
                  s.nodes.size(), s.switch_netns, s.mgmt_bridge, s.controller_addr, s.agent_bin);
  out += fmt::format("{:<6} {:<16} {:<16} {:<16} {:<8} {:<8} {:<8}\n", "NODE", "MGMT", "FABRIC",
                     "AGENT", "fab0", "swp", "mgmt0");
  for (const auto& n : status.nodes) {
    std::string agent = n.node.agent_pid > 0 ? fmt::format("{} {}", n.node.agent_pid,
                                                           n.agent_alive ? "alive" : "dead")
                                             : "not started";
    out +=
        fmt::format("{:<6} {:<16} {:<16} {:<16} {:<8} {:<8} {:<8}\n", n.node.name, n.node.mgmt_addr,
                    n.node.fabric_addr, agent, n.fabric_link, n.switch_port, n.mgmt_link);
  }
  return out;
}

std::string RenderStatusJson(const FabricStatus& status) {
  auto j = nlohmann::json::parse(FabricStateToJson(status.state));
  for (size_t i = 0; i < status.nodes.size(); ++i) {
    const NodeStatus& n = status.nodes[i];
    auto& jn = j["nodes"][i];
    jn["agent_alive"] = n.agent_alive;
    jn["links"] = {{n.node.fabric_if, n.fabric_link},
                   {n.node.switch_port, n.switch_port},
                   {n.node.mgmt_if, n.mgmt_link}};
  }
  return j.dump(2) + "\n";
}

}  // namespace fdrill

#include "harness/scenario/topology_switches.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fdrill {

namespace {

struct HcaPort {
  std::string device;
  int64_t port = 0;
  std::vector<std::string> netdevs;
};

// Every HCA port each node's agent reported, by node (each of the drill's
// nodes has an entry, empty when its agent could not say).
std::map<std::string, std::vector<HcaPort>> HcaPorts(const Json& inventory) {
  std::map<std::string, std::vector<HcaPort>> out;
  if (!inventory.is_object() || !inventory.contains("nodes")) return out;
  for (const Json& n : inventory["nodes"]) {
    if (!n.is_object() || !n.value("node", Json()).is_string()) continue;
    std::vector<HcaPort>& ports = out[n["node"].get<std::string>()];
    for (const Json& hca : n.value("hcas", Json::array())) {
      if (!hca.is_object() || !hca.value("name", Json()).is_string()) continue;
      for (const Json& p : hca.value("ports", Json::array())) {
        if (!p.is_object() || !p.value("port", Json()).is_number_integer()) continue;
        HcaPort port{.device = hca["name"].get<std::string>(), .port = p["port"].get<int64_t>()};
        for (const Json& d : p.value("netdevs", Json::array()))
          if (d.is_string()) port.netdevs.push_back(d.get<std::string>());
        ports.push_back(std::move(port));
      }
    }
  }
  return out;
}

Json Port(const std::string& name, const std::string& to, uint64_t rate_bps) {
  return {{"name", name}, {"to", to}, {"rate_bps", rate_bps}};
}

// "ib/mlx5_0/1": the link the agent's counters name an HCA port by.
std::string IbLink(const HcaPort& p) { return "ib/" + p.device + "/" + std::to_string(p.port); }

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A leaf that lists its ports: those, and each HCA port that carries one's
// netdev under the same name.
Json ListedPorts(const Leaf& leaf, const std::map<std::string, std::vector<HcaPort>>& hca) {
  Json ports = Json::array();
  for (const TopologyPort& p : leaf.ports) {
    ports.push_back(Port(p.name, p.to, p.rate_bps));
    const auto [far, netdev] = p.FarEnd();
    auto node = hca.find(far);
    if (node == hca.end()) continue;
    for (const HcaPort& h : node->second) {
      if (Has(h.netdevs, netdev))
        ports.push_back(Port(p.name, node->first + ":" + IbLink(h), p.rate_bps));
    }
  }
  return ports;
}

// A leaf that lists only its nodes: a port per netdev and HCA port of each
// rail it carries for each node (the header says how they are named).
Json DerivedPorts(const Topology& t, const Leaf& leaf,
                  const std::map<std::string, std::vector<HcaPort>>& hca) {
  Json ports = Json::array();
  for (const std::string& node : leaf.nodes) {
    for (const Rail& rail : t.rails) {
      if (!rail.HasNode(node)) continue;
      if (!leaf.rails.empty() && !Has(leaf.rails, rail.name)) continue;
      for (const std::string& netdev : rail.interfaces)
        ports.push_back(Port(node + "/" + netdev, node + ":" + netdev, 0));
      auto found = hca.find(node);
      if (found == hca.end()) continue;
      for (const HcaPort& h : found->second) {
        if (!Has(rail.devices, h.device)) continue;
        std::string name = node + "/" + h.device + "/" + std::to_string(h.port);
        for (const std::string& netdev : h.netdevs) {
          if (Has(rail.interfaces, netdev)) {
            name = node + "/" + netdev;
            break;
          }
        }
        ports.push_back(Port(name, node + ":" + IbLink(h), 0));
      }
    }
  }
  return ports;
}

}  // namespace

Json TopologySwitches(const Topology& topology, const Json& inventory) {
  const auto hca = HcaPorts(inventory);
  Json switches = Json::array();
  std::set<std::string> kept;  // the leaves cabled to a node of the drill
  for (const Leaf& leaf : topology.leaves) {
    const bool ours = std::any_of(leaf.nodes.begin(), leaf.nodes.end(),
                                  [&](const std::string& n) { return hca.count(n) > 0; });
    if (!ours) continue;
    kept.insert(leaf.name);
    Json sw = {
        {"name", leaf.name},
        {"role", "leaf"},
        {"ports", leaf.ports.empty() ? DerivedPorts(topology, leaf, hca) : ListedPorts(leaf, hca)}};
    if (leaf.rails.size() == 1) sw["rail"] = leaf.rails[0];
    switches.push_back(std::move(sw));
  }
  for (const Spine& spine : topology.spines) {
    const bool elsewhere =
        !spine.ports.empty() &&
        std::none_of(spine.ports.begin(), spine.ports.end(),
                     [&](const TopologyPort& p) { return kept.count(p.FarEnd().first) > 0; });
    if (elsewhere) continue;
    Json ports = Json::array();
    for (const TopologyPort& p : spine.ports) ports.push_back(Port(p.name, p.to, p.rate_bps));
    Json sw = {{"name", spine.name}, {"role", "spine"}, {"ports", ports}};
    if (spine.rails.size() == 1) sw["rail"] = spine.rails[0];
    switches.push_back(std::move(sw));
  }
  return switches;
}

}  // namespace fdrill

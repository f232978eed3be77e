#include "harness/scenario/topology_switches.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fdrill {

namespace {

struct HcaPort {
  std::string device;
  int64_t port = 0;
  std::vector<std::string> netdevs;
  uint64_t rate_bps = 0;  // the agent's rate_gbps (sysfs `rate`); 0: not known
};

// What a node's agent reported of its links: each HCA port, and each
// netdev's speed (sysfs `speed`, the rate its cable came up at).
struct NodeLinks {
  std::vector<HcaPort> hca_ports;
  std::optional<std::set<std::string>> netdevs;  // nullopt: the agent did not say
  std::map<std::string, uint64_t> netdev_bps;    // a netdev without a speed: absent

  // False only where the agent listed its netdevs and NAME is not one.
  bool MayHave(const std::string& name) const { return !netdevs || netdevs->count(name) > 0; }

  uint64_t NetdevBps(const std::string& netdev) const {
    auto it = netdev_bps.find(netdev);
    return it == netdev_bps.end() ? 0 : it->second;
  }
};

// What each node's agent reported, by node (each of the drill's nodes has
// an entry, empty when its agent could not say).
std::map<std::string, NodeLinks> LinksOfNodes(const Json& inventory) {
  std::map<std::string, NodeLinks> out;
  if (!inventory.is_object() || !inventory.contains("nodes")) return out;
  for (const Json& n : inventory["nodes"]) {
    if (!n.is_object() || !n.value("node", Json()).is_string()) continue;
    NodeLinks& links = out[n["node"].get<std::string>()];
    for (const Json& hca : n.value("hcas", Json::array())) {
      if (!hca.is_object() || !hca.value("name", Json()).is_string()) continue;
      for (const Json& p : hca.value("ports", Json::array())) {
        if (!p.is_object() || !p.value("port", Json()).is_number_integer()) continue;
        HcaPort port{.device = hca["name"].get<std::string>(), .port = p["port"].get<int64_t>()};
        for (const Json& d : p.value("netdevs", Json::array()))
          if (d.is_string()) port.netdevs.push_back(d.get<std::string>());
        const Json rate = p.value("rate_gbps", Json());
        if (rate.is_number() && rate.get<double>() > 0)
          port.rate_bps = static_cast<uint64_t>(rate.get<double>() * 1e9);
        links.hca_ports.push_back(std::move(port));
      }
    }
    const Json listed = n.value("netdevs", Json());
    if (listed.is_array()) links.netdevs.emplace();
    for (const Json& d : listed.is_array() ? listed : Json::array()) {
      if (!d.is_object() || !d.value("name", Json()).is_string()) continue;
      links.netdevs->insert(d["name"].get<std::string>());
      const Json speed = d.value("speed_mbps", Json());
      if (speed.is_number_integer() && speed.get<int64_t>() > 0)
        links.netdev_bps[d["name"].get<std::string>()] =
            static_cast<uint64_t>(speed.get<int64_t>()) * 1000000;
    }
  }
  return out;
}

// The rate a cable to an HCA port runs at: the port's own, else that of a
// netdev the kernel shows on it.
uint64_t HcaCableBps(const NodeLinks& links, const HcaPort& h) {
  if (h.rate_bps > 0) return h.rate_bps;
  for (const std::string& netdev : h.netdevs)
    if (uint64_t bps = links.NetdevBps(netdev); bps > 0) return bps;
  return 0;
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
// netdev under the same name. A port whose rate the file leaves out runs at
// the node end's (the netdev's speed, the HCA port's rate).
Json ListedPorts(const Leaf& leaf, const std::map<std::string, NodeLinks>& nodes) {
  Json ports = Json::array();
  for (const TopologyPort& p : leaf.ports) {
    const auto [far, netdev] = p.FarEnd();
    auto node = nodes.find(far);
    if (node == nodes.end()) {
      ports.push_back(Port(p.name, p.to, p.rate_bps));
      continue;
    }
    const NodeLinks& links = node->second;
    ports.push_back(Port(p.name, p.to, p.rate_bps > 0 ? p.rate_bps : links.NetdevBps(netdev)));
    for (const HcaPort& h : links.hca_ports) {
      if (Has(h.netdevs, netdev))
        ports.push_back(Port(p.name, node->first + ":" + IbLink(h),
                             p.rate_bps > 0 ? p.rate_bps : HcaCableBps(links, h)));
    }
  }
  return ports;
}

// A leaf that lists only its nodes: a port per netdev and HCA port of each
// rail it carries for each node (the header says how they are named), at
// the rate the node end came up at.
Json DerivedPorts(const Topology& t, const Leaf& leaf,
                  const std::map<std::string, NodeLinks>& nodes) {
  Json ports = Json::array();
  for (const std::string& node : leaf.nodes) {
    auto found = nodes.find(node);
    const NodeLinks none;
    const NodeLinks& links = found == nodes.end() ? none : found->second;
    for (const Rail& rail : t.rails) {
      if (!rail.HasNode(node)) continue;
      if (!leaf.rails.empty() && !Has(leaf.rails, rail.name)) continue;
      for (const std::string& netdev : rail.interfaces) {
        // A rail's interfaces are every node type's: one this node's agent
        // does not have is no cable of it.
        if (!links.MayHave(netdev)) continue;
        ports.push_back(Port(node + "/" + netdev, node + ":" + netdev, links.NetdevBps(netdev)));
      }
      for (const HcaPort& h : links.hca_ports) {
        if (!Has(rail.devices, h.device)) continue;
        std::string name = node + "/" + h.device + "/" + std::to_string(h.port);
        for (const std::string& netdev : h.netdevs) {
          if (Has(rail.interfaces, netdev)) {
            name = node + "/" + netdev;
            break;
          }
        }
        ports.push_back(Port(name, node + ":" + IbLink(h), HcaCableBps(links, h)));
      }
    }
  }
  return ports;
}

}  // namespace

Json TopologySwitches(const Topology& topology, const Json& inventory) {
  const auto nodes = LinksOfNodes(inventory);
  Json switches = Json::array();
  std::set<std::string> kept;  // the leaves cabled to a node of the drill
  for (const Leaf& leaf : topology.leaves) {
    const bool ours = std::any_of(leaf.nodes.begin(), leaf.nodes.end(),
                                  [&](const std::string& n) { return nodes.count(n) > 0; });
    if (!ours) continue;
    kept.insert(leaf.name);
    Json sw = {{"name", leaf.name},
               {"role", "leaf"},
               {"ports", leaf.ports.empty() ? DerivedPorts(topology, leaf, nodes)
                                            : ListedPorts(leaf, nodes)}};
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

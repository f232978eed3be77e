// Topology files: YAML read outside the scenario loader (loader.cc, load_*.cc). Every
// mapping is checked against its keys, as the scenario loader does, and every
// conflict names both places it comes from.
#include "harness/scenario/topology.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "common/core/did_you_mean.h"
#include "common/core/units.h"
#include "harness/scenario/hostlist.h"
#include "harness/scenario/yaml_errors.h"

namespace fdrill {

namespace {

class TopologyParser {
 public:
  explicit TopologyParser(std::string file) : file_(std::move(file)) {}

  Result<Topology> Parse(const std::string& text);

 private:
  Status Error(const YAML::Node& at, const std::string& what) const {
    return YamlError(file_, at, what);
  }

  Status CheckKeys(const YAML::Node& map, const std::string& section,
                   const std::set<std::string>& allowed) const {
    return CheckYamlKeys(file_, map, section, allowed);
  }

  // A name, or a non-empty list of names.
  Result<std::vector<std::string>> Names(const YAML::Node& n, const std::string& key) const {
    std::vector<std::string> out;
    if (n.IsScalar()) return std::vector<std::string>{n.as<std::string>()};
    if (!n.IsSequence() || n.size() == 0)
      return Error(n, key + " must be a name or a non-empty list of names");
    for (const auto& e : n) {
      if (!e.IsScalar() || e.as<std::string>().empty()) return Error(e, key + " must hold names");
      out.push_back(e.as<std::string>());
    }
    return out;
  }

  // A hostlist like gpu[001-016], or a list of them; a bad one is named at
  // its own place in the file.
  Result<std::set<std::string>> Nodes(const YAML::Node& n, const std::string& key) const {
    std::set<std::string> out;
    const bool list = n.IsSequence();
    if (!n.IsScalar() && !(list && n.size() > 0))
      return Error(n, key + " must be a hostlist like gpu[001-016] or a list of them");
    std::vector<YAML::Node> items;
    if (list) {
      for (const auto& e : n) items.push_back(e);
    } else {
      items.push_back(n);
    }
    for (const auto& e : items) {
      if (!e.IsScalar()) return Error(e, key + " must hold hostlists");
      auto names = ExpandHostlist(e.as<std::string>());
      if (!names.ok()) return Error(e, key + ": " + names.status().message());
      for (auto& h : *names) {
        if (!out.insert(h).second) return Error(e, key + ": node " + h + " is listed twice");
      }
    }
    return out;
  }

  // The entry NAME of list N (N itself when it is one name), for messages.
  static YAML::Node Entry(const YAML::Node& n, const std::string& name) {
    if (n.IsSequence()) {
      for (const auto& e : n) {
        if (e.IsScalar() && e.as<std::string>() == name) return e;
      }
    }
    return n;
  }

  Status ParseRails(const YAML::Node& n, Topology* t);
  Status ParseLeaves(const YAML::Node& n, Topology* t);
  Status ParseSpines(const YAML::Node& n, Topology* t);
  Result<std::vector<TopologyPort>> Ports(const YAML::Node& n, const std::string& what) const;
  Status CheckCabling(const YAML::Node& root, const Topology& t) const;
  Status ParseDomains(const YAML::Node& n, Topology* t);

  std::string file_;
};

// Two rails may share a name only on disjoint nodes (a mixed cluster where
// gpu[001-016] have mlx5_0 on rail0 and the rest on rail1).
bool Overlap(const Rail& a, const Rail& b) {
  if (!a.nodes || !b.nodes) return true;
  for (const auto& n : *a.nodes) {
    if (b.nodes->count(n)) return true;
  }
  return false;
}

Status TopologyParser::ParseRails(const YAML::Node& n, Topology* t) {
  if (!n.IsMap()) return Error(n, "rails must be a mapping of rail names to {devices, interfaces}");
  for (const auto& kv : n) {
    Rail rail;
    rail.name = kv.first.as<std::string>();
    const std::string what = "rails." + rail.name;
    const YAML::Node r = kv.second;
    if (auto st = CheckKeys(r, what, {"devices", "interfaces", "nodes"}); !st.ok()) return st;
    if (!r["devices"] && !r["interfaces"])
      return Error(r, what + " needs devices (HCAs like mlx5_0) or interfaces (netdevs like ib0)");
    for (auto [key, out] :
         {std::pair{"devices", &rail.devices}, std::pair{"interfaces", &rail.interfaces}}) {
      if (!r[key]) continue;
      auto names = Names(r[key], what + "." + key);
      if (!names.ok()) return names.status();
      *out = *names;
    }
    if (r["nodes"]) {
      auto nodes = Nodes(r["nodes"], what + ".nodes");
      if (!nodes.ok()) return nodes.status();
      rail.nodes = *nodes;
    }
    // One HCA or netdev on one node is on one rail.
    for (const auto& other : t->rails) {
      if (!Overlap(rail, other)) continue;
      for (const auto* mine : {&rail.devices, &rail.interfaces}) {
        for (const auto& name : *mine) {
          for (const auto* theirs : {&other.devices, &other.interfaces}) {
            if (std::find(theirs->begin(), theirs->end(), name) == theirs->end()) continue;
            return Error(Entry(r[mine == &rail.devices ? "devices" : "interfaces"], name),
                         name + " is on rails " + other.name + " and " + rail.name +
                             " (an HCA or netdev is on one rail; give the rails disjoint nodes: if "
                             "they differ by node)");
          }
        }
      }
    }
    t->rails.push_back(std::move(rail));
  }
  return Status::Ok();
}

Status TopologyParser::ParseLeaves(const YAML::Node& n, Topology* t) {
  if (!n.IsMap())
    return Error(n, "leaves must be a mapping of leaf switch names to {nodes, rails}");
  std::set<std::string> rail_names;
  for (const auto& r : t->rails) rail_names.insert(r.name);
  std::map<std::pair<std::string, std::string>, std::string> cabled;  // (node, rail or "") -> leaf
  for (const auto& kv : n) {
    Leaf leaf;
    leaf.name = kv.first.as<std::string>();
    const std::string what = "leaves." + leaf.name;
    const YAML::Node l = kv.second;
    if (auto st = CheckKeys(l, what, {"nodes", "rails", "ports"}); !st.ok()) return st;
    if (!l["nodes"]) return Error(l, what + " needs nodes (a hostlist like gpu[001-016])");
    auto nodes = Nodes(l["nodes"], what + ".nodes");
    if (!nodes.ok()) return nodes.status();
    leaf.nodes = *nodes;
    if (l["rails"]) {
      auto rails = Names(l["rails"], what + ".rails");
      if (!rails.ok()) return rails.status();
      for (const auto& r : *rails) {
        if (rail_names.count(r)) continue;
        const std::string hint = DidYouMean(r, rail_names);
        return Error(Entry(l["rails"], r), what + ".rails: no rail \"" + r +
                                               "\" in rails:" + (hint.empty() ? "" : "; " + hint));
      }
      leaf.rails = *rails;
    }
    if (l["ports"]) {
      auto ports = Ports(l["ports"], what + ".ports");
      if (!ports.ok()) return ports.status();
      leaf.ports = std::move(*ports);
    }
    // A leaf listing no rails takes all of them (or the one fabric when the
    // file names no rails).
    std::vector<std::string> keys = leaf.rails;
    if (keys.empty()) keys.assign(rail_names.begin(), rail_names.end());
    if (keys.empty()) keys.push_back("");
    for (const auto& node : leaf.nodes) {
      for (const auto& rail : keys) {
        auto [it, fresh] = cabled.emplace(std::pair{node, rail}, leaf.name);
        if (fresh) continue;
        return Error(l["nodes"], what + ": node " + node + " is also on leaf " + it->second +
                                     (rail.empty() ? "" : " on rail " + rail) +
                                     " (a port is cabled to one leaf)");
      }
    }
    t->leaves.push_back(std::move(leaf));
  }
  return Status::Ok();
}

Result<std::vector<TopologyPort>> TopologyParser::Ports(const YAML::Node& n,
                                                        const std::string& what) const {
  if (!n.IsMap() || n.size() == 0)
    return Error(n, what + " must map port names to {to: NODE:IFNAME or SWITCH:PORT, rate}");
  std::vector<TopologyPort> out;
  for (const auto& kv : n) {
    TopologyPort port;
    port.name = kv.first.as<std::string>();
    const std::string at = what + "." + port.name;
    const YAML::Node p = kv.second;
    if (auto st = CheckKeys(p, at, {"to", "rate"}); !st.ok()) return st;
    if (!p["to"] || !p["to"].IsScalar())
      return Error(p, at + " needs to: (NODE:IFNAME like n0:fab0, or SWITCH:PORT like spine:dn0)");
    port.to = p["to"].as<std::string>();
    const auto colon = port.to.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == port.to.size())
      return Error(p["to"], at + ".to must be NODE:IFNAME or SWITCH:PORT, got \"" + port.to + "\"");
    if (p["rate"]) {
      auto rate = ParseRateBitsPerSec(p["rate"].Scalar());
      if (!rate.ok()) return Error(p["rate"], at + ".rate: " + rate.status().message());
      port.rate_bps = *rate;
    }
    out.push_back(std::move(port));
  }
  return out;
}

Status TopologyParser::ParseSpines(const YAML::Node& n, Topology* t) {
  if (!n.IsMap())
    return Error(n, "spines must be a mapping of spine switch names to {rails, ports}");
  std::set<std::string> rail_names;
  for (const auto& r : t->rails) rail_names.insert(r.name);
  for (const auto& kv : n) {
    Spine spine;
    spine.name = kv.first.as<std::string>();
    const std::string what = "spines." + spine.name;
    const YAML::Node sp = kv.second;
    if (auto st = CheckKeys(sp, what, {"rails", "ports"}); !st.ok()) return st;
    for (const auto& leaf : t->leaves) {
      if (leaf.name == spine.name)
        return Error(kv.first, what + ": a leaf has this name too (switch names are unique)");
    }
    if (sp["rails"]) {
      auto rails = Names(sp["rails"], what + ".rails");
      if (!rails.ok()) return rails.status();
      for (const auto& r : *rails) {
        if (rail_names.count(r)) continue;
        const std::string hint = DidYouMean(r, rail_names);
        return Error(Entry(sp["rails"], r), what + ".rails: no rail \"" + r +
                                                "\" in rails:" + (hint.empty() ? "" : "; " + hint));
      }
      spine.rails = *rails;
    }
    if (sp["ports"]) {
      auto ports = Ports(sp["ports"], what + ".ports");
      if (!ports.ok()) return ports.status();
      spine.ports = std::move(*ports);
    }
    t->spines.push_back(std::move(spine));
  }
  return Status::Ok();
}

// Every port's far end exists: a node port's node is on that leaf, and a
// switch port's peer names this port back.
Status TopologyParser::CheckCabling(const YAML::Node& root, const Topology& t) const {
  auto check = [&](const std::string& section, const std::string& name,
                   const std::vector<TopologyPort>& ports, const std::set<std::string>* nodes) {
    for (const auto& port : ports) {
      const YAML::Node at = root[section][name]["ports"][port.name]["to"];
      const auto [far, far_port] = port.FarEnd();
      const std::vector<TopologyPort>* theirs = t.SwitchPorts(far);
      if (theirs == nullptr) {
        if (nodes != nullptr && nodes->count(far)) continue;  // a node on this leaf
        return Error(at, section + "." + name + ".ports." + port.name + ".to: " + far +
                             (nodes != nullptr ? " is neither a node of this leaf nor a switch"
                                               : " is not a switch in leaves: or spines:"));
      }
      const std::string back = name + ":" + port.name;
      bool points_back = false;
      for (const auto& p : *theirs) points_back |= p.name == far_port && p.to == back;
      if (!points_back) {
        return Error(at, section + "." + name + ".ports." + port.name + ".to: " + port.to +
                             " is not cabled back (its to: must be " + back + ")");
      }
    }
    return Status::Ok();
  };
  for (const auto& l : t.leaves) {
    if (auto st = check("leaves", l.name, l.ports, &l.nodes); !st.ok()) return st;
  }
  for (const auto& s : t.spines) {
    if (auto st = check("spines", s.name, s.ports, nullptr); !st.ok()) return st;
  }
  return Status::Ok();
}

Status TopologyParser::ParseDomains(const YAML::Node& n, Topology* t) {
  if (!n.IsMap()) return Error(n, "nvlink_domains must be a mapping of domain names to {nodes}");
  std::map<std::string, std::string> domain_of;
  for (const auto& kv : n) {
    NvlinkDomain d;
    d.name = kv.first.as<std::string>();
    const std::string what = "nvlink_domains." + d.name;
    if (auto st = CheckKeys(kv.second, what, {"nodes"}); !st.ok()) return st;
    if (!kv.second["nodes"])
      return Error(kv.second, what + " needs nodes (a hostlist like gpu[001-018])");
    auto nodes = Nodes(kv.second["nodes"], what + ".nodes");
    if (!nodes.ok()) return nodes.status();
    d.nodes = *nodes;
    for (const auto& node : d.nodes) {
      auto [it, fresh] = domain_of.emplace(node, d.name);
      if (!fresh)
        return Error(kv.second["nodes"],
                     what + ": node " + node + " is also in NVLink domain " + it->second);
    }
    t->nvlink_domains.push_back(std::move(d));
  }
  return Status::Ok();
}

Result<Topology> TopologyParser::Parse(const std::string& text) {
  auto parsed = LoadYaml(file_, text);
  if (!parsed.ok()) return parsed.status();
  const YAML::Node root = *parsed;
  if (!root.IsMap())
    return InvalidArgument(file_ +
                           ": a topology is a YAML mapping (rails, leaves, nvlink_domains)");
  Topology t;
  t.file = file_;
  try {
    if (auto st = CheckKeys(root, "the topology", {"rails", "leaves", "spines", "nvlink_domains"});
        !st.ok())
      return st;
    // Rails first: leaves name them.
    if (root["rails"]) {
      if (auto st = ParseRails(root["rails"], &t); !st.ok()) return st;
    }
    if (root["leaves"]) {
      if (auto st = ParseLeaves(root["leaves"], &t); !st.ok()) return st;
    }
    if (root["spines"]) {
      if (auto st = ParseSpines(root["spines"], &t); !st.ok()) return st;
    }
    if (auto st = CheckCabling(root, t); !st.ok()) return st;
    if (root["nvlink_domains"]) {
      if (auto st = ParseDomains(root["nvlink_domains"], &t); !st.ok()) return st;
    }
  } catch (const YAML::Exception& e) {  // a conversion we did not guard: a refusal, never a crash
    return InvalidArgument(file_ + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  return t;
}

}  // namespace

std::optional<std::string> Topology::RailOf(const std::string& node,
                                            const std::string& name) const {
  for (const auto& r : rails) {
    if (!r.HasNode(node)) continue;
    for (const auto* names : {&r.devices, &r.interfaces}) {
      if (std::find(names->begin(), names->end(), name) != names->end()) return r.name;
    }
  }
  return std::nullopt;
}

std::vector<std::string> Topology::RailsOf(const std::string& node) const {
  std::vector<std::string> out;
  for (const auto& r : rails) {
    if (r.HasNode(node)) out.push_back(r.name);
  }
  return out;
}

std::optional<std::string> Topology::LeafOf(const std::string& node,
                                            const std::string& rail) const {
  for (const auto& l : leaves) {
    if (!l.nodes.count(node)) continue;
    if (l.rails.empty() || std::find(l.rails.begin(), l.rails.end(), rail) != l.rails.end())
      return l.name;
  }
  return std::nullopt;
}

const std::vector<TopologyPort>* Topology::SwitchPorts(const std::string& name) const {
  for (const auto& l : leaves)
    if (l.name == name) return &l.ports;
  for (const auto& s : spines)
    if (s.name == name) return &s.ports;
  return nullptr;
}

std::optional<std::string> Topology::NvlinkDomainOf(const std::string& node) const {
  for (const auto& d : nvlink_domains) {
    if (d.nodes.count(node)) return d.name;
  }
  return std::nullopt;
}

bool IsTopologyFile(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  const std::string ext = ".yaml";
  return name.rfind("topology", 0) == 0 && name.size() > ext.size() &&
         name.compare(name.size() - ext.size(), ext.size(), ext) == 0;
}

Result<Topology> ParseTopology(const std::string& text, const std::string& file_name) {
  return TopologyParser(file_name).Parse(text);
}

Result<Topology> LoadTopology(const std::string& path) {
  // A regular file of sane size only: /dev/zero or a FIFO would never end.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return NotFound(path + ": cannot open the topology file (a regular file)");
  if (std::filesystem::file_size(path, ec) > (16u << 20))
    return InvalidArgument(path + ": the topology file is over 16 MiB");
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot open the topology file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseTopology(ss.str(), path);
}

}  // namespace fdrill

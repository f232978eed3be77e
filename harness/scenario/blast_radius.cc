#include "harness/scenario/blast_radius.h"

#include <algorithm>
#include <map>

#include "harness/scenario/scenario.h"
#include "injectors/injector.h"

namespace fdrill {

namespace {

std::string StringParam(const Json& params, const char* key) {
  return params.contains(key) && params[key].is_string() ? params[key].get<std::string>() : "";
}

bool BoolParam(const Json& params, const char* key, bool absent) {
  return params.contains(key) && params[key].is_boolean() ? params[key].get<bool>() : absent;
}

// The rails an NCCL_IB_HCA list takes away from NODE's ranks. NCCL's
// syntax: a leading ^ excludes the HCAs listed, else only they are used; a
// leading = matches names exactly, else as prefixes ("mlx5" is every
// mlx5_*); ":port" after a name is ignored here (a rail is per HCA).
std::set<std::string> RailsTakenByIbHca(std::string list, const std::string& node,
                                        const Topology* topology) {
  const bool exclude = !list.empty() && list[0] == '^';
  if (exclude) list.erase(0, 1);
  const bool exact = !list.empty() && list[0] == '=';
  if (exact) list.erase(0, 1);
  std::vector<std::string> names;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    std::string entry = list.substr(at, comma - at);
    entry = entry.substr(0, entry.find(':'));
    if (!entry.empty()) names.push_back(entry);
    at = comma + 1;
  }
  auto matches = [&](const std::string& device) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return exact ? device == n : device.rfind(n, 0) == 0;
    });
  };
  std::set<std::string> taken;
  std::set<std::string> on_rails;  // names that matched a device on some rail
  if (topology) {
    for (const auto& rail : topology->rails) {
      if (!rail.HasNode(node)) continue;
      const bool hit = std::any_of(rail.devices.begin(), rail.devices.end(), matches);
      if (hit == exclude) taken.insert(rail.name);
      for (const auto& n : names) {
        for (const auto& d : rail.devices) {
          if (exact ? d == n : d.rfind(n, 0) == 0) on_rails.insert(n);
        }
      }
    }
  }
  if (exclude) {
    for (const auto& n : names) {
      if (!on_rails.count(n)) taken.insert(n);  // an HCA on no rail is its own
    }
  }
  return taken;
}

std::string List(const std::vector<std::string>& words) {
  constexpr size_t kShown = 6;
  std::string out;
  const size_t shown = std::min(words.size(), kShown);
  for (size_t i = 0; i < shown; ++i) {
    if (i) out += i + 1 == shown && words.size() <= kShown ? " and " : ", ";
    out += words[i];
  }
  if (words.size() > kShown) out += " and " + std::to_string(words.size() - kShown) + " more";
  return out;
}

std::string Count(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void Bump(std::map<std::string, int>* m, const std::string& key, int by) {
  if (((*m)[key] += by) == 0) m->erase(key);
}

// What is in force at one instant, counted so an apply or revert costs
// O(log n) and a phase's walk O(n log n).
class InForce {
 public:
  InForce(const PhaseSpec& phase, const std::vector<Footprint>& prints)
      : phase_(phase), prints_(prints) {}

  void Change(size_t i, int by) {
    const Footprint& p = prints_[i];
    for (const auto& node : p.nodes) {
      Bump(&nodes_, node, by);
      for (const auto& r : p.rails) Bump(&node_rails_[node], r, by);
    }
    for (const auto& r : p.rails) Bump(&rails_, r, by);
    for (const auto& l : p.leaves) Bump(&leaves_, l, by);
    if (p.nvlink) Bump(&domains_, *p.nvlink, by);
    if (by > 0) {
      active_.insert(i);
    } else {
      active_.erase(i);
    }
  }

  int RailsOn(const std::string& node) const {
    auto it = node_rails_.find(node);
    return it == node_rails_.end() ? 0 : static_cast<int>(it->second.size());
  }

  // The ids of the faults in force that PICK says count, and the keys of M.
  template <typename Pick>
  std::string Faults(Pick pick) const {
    std::vector<std::string> ids;
    for (size_t i : active_) {
      if (pick(i)) ids.push_back(phase_.faults[i].id);
    }
    return (ids.size() == 1 ? "fault " : "faults ") + List(ids) +
           (ids.size() == 1 ? " is" : " are");
  }
  static std::vector<std::string> Keys(const std::map<std::string, int>& m) {
    std::vector<std::string> out;
    for (const auto& [k, v] : m) out.push_back(k);
    return out;
  }

  const PhaseSpec& phase_;
  const std::vector<Footprint>& prints_;
  std::map<std::string, int> nodes_, rails_, leaves_, domains_;
  std::map<std::string, std::map<std::string, int>> node_rails_;
  std::set<size_t> active_;
};

}  // namespace

namespace {

// A switch port's reach in the map: the switch's rails, and through the
// port either one node ("n3:fab1") or a leaf ("rail1-leaf0:up0" from a
// spine, or the leaf itself behind its own uplink). `whole`: every port of
// the switch (OnSwitch::kWhole).
Footprint SwitchPortFootprint(const FaultSpec& f, const Topology& topology, bool whole) {
  Footprint out;
  const std::string port = StringParam(f.params, "interface");
  auto leaf_reach = [&](const std::string& leaf_name) {
    for (const auto& l : topology.leaves) {
      if (l.name != leaf_name) continue;
      out.leaves.insert(l.name);
      out.nodes.insert(l.nodes.begin(), l.nodes.end());
      out.rails.insert(l.rails.begin(), l.rails.end());
    }
  };
  for (const auto& sp : topology.spines) {
    if (sp.name != f.node) continue;
    out.rails.insert(sp.rails.begin(), sp.rails.end());
    for (const auto& p : sp.ports) {
      if (whole || p.name == port) leaf_reach(p.to.substr(0, p.to.find(':')));
    }
  }
  for (const auto& l : topology.leaves) {
    if (l.name != f.node) continue;
    out.rails.insert(l.rails.begin(), l.rails.end());
    out.leaves.insert(l.name);
    for (const auto& p : l.ports) {
      if (!whole && p.name != port) continue;
      const std::string peer = p.to.substr(0, p.to.find(':'));
      if (l.nodes.count(peer)) {
        out.nodes.insert(peer);
      } else {
        leaf_reach(l.name);  // its uplink: everything behind the leaf
      }
    }
  }
  return out;
}

// Radius::kFarHca (injectors/injector.h): what goes dark is the far node's
// link, not the vantage's (which only sends the SMPs): `hca` is that HCA's
// NodeDescription, by convention (mlx5's default) "<hostname> <device>", so
// that node, its device's rail and its leaf there — the far node's leaf
// only, not the vantage's on that rail. By `guid` or switch_lid:port the far
// node is known only on the fabric; the vantage alone counts.
Footprint FarHcaFootprint(const FaultSpec& f, const Topology* topology) {
  Footprint out;
  out.nodes.insert(f.node);
  const std::string hca = StringParam(f.params, "hca");
  const size_t space = hca.find(' ');
  if (space == std::string::npos) return out;
  const std::string far = hca.substr(0, space);
  const std::string device = hca.substr(space + 1);
  out.nodes.insert(far);
  const std::string rail = topology ? topology->RailOf(far, device).value_or(device) : device;
  out.rails.insert(rail);
  if (topology) {
    if (auto leaf = topology->LeafOf(far, rail)) out.leaves.insert(*leaf);
  }
  return out;
}

}  // namespace

Footprint FootprintOf(const FaultSpec& f, const Topology* topology) {
  // A kind the registry does not know was refused by validation; count its node.
  const InjectorInfo* info = FindInjector(f.kind);
  // The loader refuses a switch fault without a map.
  if (f.on_switch && topology) {
    return SwitchPortFootprint(f, *topology,
                               info != nullptr && info->on_switch == OnSwitch::kWhole);
  }
  if (info != nullptr && info->radius == Radius::kFarHca) return FarHcaFootprint(f, topology);
  Footprint out;
  out.nodes.insert(f.node);
  auto rail_of = [&](const std::string& name) {
    std::optional<std::string> rail = topology ? topology->RailOf(f.node, name) : std::nullopt;
    return rail ? *rail : name;
  };
  switch (info ? info->scope : Scope::kNode) {
    case Scope::kInterface:  // without interface (link_partition): every interface of the node
      if (f.params.contains("interface")) {
        out.rails.insert(rail_of(StringParam(f.params, "interface")));
      } else if (topology) {
        for (const auto& r : topology->RailsOf(f.node)) out.rails.insert(r);
      }
      break;
    case Scope::kIbPort:
      out.rails.insert(rail_of(StringParam(f.params, "device")));
      break;
    case Scope::kGpu:
      out.nvlink = f.node;
      break;
    case Scope::kNccl:
      if (f.params.contains("ib_hca"))
        out.rails = RailsTakenByIbHca(StringParam(f.params, "ib_hca"), f.node, topology);
      if (BoolParam(f.params, "p2p_disable", false) || !BoolParam(f.params, "nvls_enable", true))
        out.nvlink = f.node;
      break;
    case Scope::kRank:
    case Scope::kNode:
    case Scope::kSwitch:  // on a node: refused when the scenario loads
      break;
  }
  if (out.nvlink && topology) out.nvlink = topology->NvlinkDomainOf(f.node).value_or(f.node);
  if (topology) {
    for (const auto& r : out.rails) {
      if (auto leaf = topology->LeafOf(f.node, r)) out.leaves.insert(*leaf);
    }
  }
  return out;
}

PhaseBlast WalkBlastRadius(const PhaseSpec& phase, const BlastRadiusSpec& limits,
                           const Topology* topology,
                           const std::function<std::string(Duration)>& when) {
  PhaseBlast out;
  const size_t n = phase.faults.size();
  std::vector<Footprint> prints;
  std::vector<Duration> starts, ends;
  for (const auto& f : phase.faults) {
    prints.push_back(FootprintOf(f, topology));
    starts.push_back(f.at);
    // "Until the phase's end": its latest end, a gate's timeout.
    ends.push_back(f.length.count() ? f.at + f.length : phase.MaxDuration());
  }
  std::vector<size_t> by_start(n), by_end(n);
  for (size_t i = 0; i < n; ++i) by_start[i] = by_end[i] = i;
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](size_t a, size_t b) { return starts[a] < starts[b]; });
  std::stable_sort(by_end.begin(), by_end.end(),
                   [&](size_t a, size_t b) { return ends[a] < ends[b]; });
  InForce in(phase, prints);
  size_t next_start = 0, next_end = 0;
  while (next_start < n) {
    const Duration t = starts[by_start[next_start]];
    // Reverts first at one instant: the engine waits for them before it applies.
    while (next_end < n && ends[by_end[next_end]] <= t) in.Change(by_end[next_end++], -1);
    std::vector<size_t> applied;
    while (next_start < n && starts[by_start[next_start]] == t) {
      applied.push_back(by_start[next_start]);
      in.Change(by_start[next_start++], +1);
    }
    BlastRadius& l = out.largest;
    l.nodes = std::max(l.nodes, static_cast<int>(in.nodes_.size()));
    l.rails = std::max(l.rails, static_cast<int>(in.rails_.size()));
    l.leaves = std::max(l.leaves, static_cast<int>(in.leaves_.size()));
    l.nvlink_domains = std::max(l.nvlink_domains, static_cast<int>(in.domains_.size()));
    std::string busiest;  // the node applied to now with the most rails
    for (size_t i : applied) {
      const std::string& node = phase.faults[i].node;
      if (busiest.empty() || in.RailsOn(node) > in.RailsOn(busiest)) busiest = node;
    }
    l.rails_per_node = std::max(l.rails_per_node, in.RailsOn(busiest));
    if (out.violation) continue;
    // The fault applied now that counts for a measure: the culprit.
    auto culprit = [&](auto counts) {
      size_t c = applied.back();
      for (size_t i : applied) {
        if (counts(i)) c = i;
      }
      return c;
    };
    auto over = [&](const char* key, const std::optional<int>& max, size_t have) {
      return max && static_cast<int>(have) > *max
                 ? std::string("blast_radius.") + key + " " + std::to_string(*max) + ": at " +
                       when(t) + " "
                 : std::string();
    };
    auto any = [](size_t) { return true; };
    auto has_rails = [&](size_t i) { return !prints[i].rails.empty(); };
    auto has_leaves = [&](size_t i) { return !prints[i].leaves.empty(); };
    auto has_nvlink = [&](size_t i) { return prints[i].nvlink.has_value(); };
    auto on_busiest = [&](size_t i) {
      return phase.faults[i].node == busiest && !prints[i].rails.empty();
    };
    // OVER, the faults PICK counts, WHERE they are in force (the keys of
    // HELD, and how many: ONE or MANY), and the culprit among them.
    auto violation = [&](const std::string& over, auto pick, const std::string& where,
                         const std::map<std::string, int>& held, const char* one,
                         const char* many) {
      return BlastViolation{over + in.Faults(pick) + " in force " + where + " " +
                                List(InForce::Keys(held)) + " (" + Count(held.size(), one, many) +
                                ")",
                            culprit(pick)};
    };
    if (auto over_nodes = over("max_nodes", limits.max_nodes, in.nodes_.size());
        !over_nodes.empty()) {
      out.violation = violation(over_nodes, any, "on nodes", in.nodes_, "node", "nodes");
    } else if (auto over_per_node =
                   over("max_rails_per_node", limits.max_rails_per_node, in.RailsOn(busiest));
               !over_per_node.empty()) {
      out.violation = violation(over_per_node, on_busiest, "on " + busiest + " on rails",
                                in.node_rails_.at(busiest), "rail", "rails");
    } else if (auto over_rails = over("max_rails", limits.max_rails, in.rails_.size());
               !over_rails.empty()) {
      out.violation = violation(over_rails, has_rails, "on rails", in.rails_, "rail", "rails");
    } else if (auto over_leaves = over("max_leaves", limits.max_leaves, in.leaves_.size());
               !over_leaves.empty()) {
      out.violation =
          violation(over_leaves, has_leaves, "under leaves", in.leaves_, "leaf", "leaves");
    } else if (auto over_domains =
                   over("max_nvlink_domains", limits.max_nvlink_domains, in.domains_.size());
               !over_domains.empty()) {
      out.violation = violation(over_domains, has_nvlink, "in NVLink domains", in.domains_,
                                "NVLink domain", "NVLink domains");
    }
  }
  return out;
}

BlastRadius LargestBlastRadius(const std::vector<PhaseSpec>& phases, const Topology* topology) {
  BlastRadius out;
  for (const auto& p : phases) {
    const BlastRadius r =
        WalkBlastRadius(p, {}, topology, [](Duration) { return std::string(); }).largest;
    out.nodes = std::max(out.nodes, r.nodes);
    out.rails_per_node = std::max(out.rails_per_node, r.rails_per_node);
    out.rails = std::max(out.rails, r.rails);
    out.leaves = std::max(out.leaves, r.leaves);
    out.nvlink_domains = std::max(out.nvlink_domains, r.nvlink_domains);
  }
  return out;
}

std::string BlastRadiusSummary(const std::vector<PhaseSpec>& phases, const Topology* topology,
                               const BlastRadiusSpec& limits) {
  const BlastRadius r = LargestBlastRadius(phases, topology);
  std::string out = "largest at once: " + Count(static_cast<size_t>(r.nodes), "node", "nodes");
  if (topology) {
    out += ", " + Count(static_cast<size_t>(r.rails_per_node), "rail", "rails") + " per node, " +
           Count(static_cast<size_t>(r.rails), "rail", "rails") + ", " +
           Count(static_cast<size_t>(r.leaves), "leaf", "leaves") + ", " +
           Count(static_cast<size_t>(r.nvlink_domains), "NVLink domain", "NVLink domains") +
           " (topology " + topology->file + ")";
  } else {
    out += " (rails, leaves and NVLink domains need topology:)";
  }
  std::string set;
  for (auto [key, max] :
       {std::pair{"max_nodes", limits.max_nodes},
        std::pair{"max_rails_per_node", limits.max_rails_per_node},
        std::pair{"max_rails", limits.max_rails}, std::pair{"max_leaves", limits.max_leaves},
        std::pair{"max_nvlink_domains", limits.max_nvlink_domains}}) {
    if (max) set += (set.empty() ? "" : ", ") + std::string(key) + " " + std::to_string(*max);
  }
  return out + "; limits: " + (set.empty() ? "none" : set);
}

}  // namespace fdrill

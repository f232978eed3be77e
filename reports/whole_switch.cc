#include "reports/whole_switch.h"

#include <algorithm>
#include <set>
#include <utility>

namespace fdrill {

namespace {

using End = std::pair<std::string, std::string>;  // (node or switch, its link or port)
using Cable = std::pair<End, End>;                // ends in order

Cable MakeCable(End a, End b) { return a < b ? Cable{a, b} : Cable{b, a}; }

// The cable at END, its ends in order; nullopt when no switch port is cabled
// to it (FarEnd, run_data.h).
std::optional<Cable> CableAt(const std::vector<InventorySwitch>& switches, const End& end) {
  auto far = FarEnd(switches, end.first, end.second);
  if (!far) return std::nullopt;
  return MakeCable(end, *far);
}

// A cable's identity: its switch port when the other end is a node's (a
// node's netdev and the HCA port under it are one cable, listed twice under
// one port name: harness/scenario/topology_switches.h), both ends between
// two switches.
Cable Identity(const Cable& c, const std::set<std::string>& switch_names) {
  const bool first = switch_names.count(c.first.first) > 0;
  const bool second = switch_names.count(c.second.first) > 0;
  if (first && !second) return {c.first, {}};
  if (second && !first) return {c.second, {}};
  return c;
}

// Whether COUNTERS holds any counter of END's link ("fab1.*" on its node).
bool Sampled(const CounterIndex& counters, const End& end) {
  const std::string prefix = end.second + ".";
  auto it = counters.series().lower_bound(CounterIndex::Key{end.first, prefix});
  return it != counters.series().end() && it->first.first == end.first &&
         it->first.second.starts_with(prefix);
}

}  // namespace

std::optional<SwitchEvidence> WholeSwitch(const CounterIndex& counters,
                                          const std::vector<LinkEvidence>& links,
                                          const std::vector<InventorySwitch>& switches) {
  if (links.empty() || switches.empty()) return std::nullopt;
  std::set<std::string> switch_names;
  for (const InventorySwitch& sw : switches) switch_names.insert(sw.name);

  // The cables of the comparable links, and the switches all of them end on.
  const double floor = links.front().score / 3;
  std::set<Cable> cables;
  std::vector<std::string> named;
  std::optional<std::set<std::string>> shared;
  for (const LinkEvidence& l : links) {
    if (l.score < floor) break;  // strongest first
    if (l.retrans_only) continue;
    const std::optional<Cable> cable = CableAt(switches, {l.node, l.link});
    // A link no switch port faces: a node's other link says the fault is
    // not the switch's alone; a switch's own uncabled link (its bridge, as
    // the emulated fabric's br0) is the switch itself.
    if (!cable && !switch_names.count(l.node)) return std::nullopt;
    std::set<std::string> ends_on;
    if (!cable) {
      ends_on.insert(l.node);
    } else {
      for (const End* e : {&cable->first, &cable->second})
        if (switch_names.count(e->first)) ends_on.insert(e->first);
    }
    if (shared) {
      std::set<std::string> both;
      std::set_intersection(shared->begin(), shared->end(), ends_on.begin(), ends_on.end(),
                            std::inserter(both, both.end()));
      shared = std::move(both);
    } else {
      shared = std::move(ends_on);
    }
    if (shared->empty()) return std::nullopt;
    if (cable && cables.insert(Identity(*cable, switch_names)).second)
      named.push_back(l.node + " " + l.link);
  }
  if (cables.size() < 2 || !shared || shared->size() != 1) return std::nullopt;
  const std::string& name = *shared->begin();

  // Every sampled cable of that switch has evidence.
  for (const InventorySwitch& sw : switches) {
    if (sw.name != name) continue;
    for (const InventoryPort& p : sw.ports) {
      const auto far = p.FarEnd();
      if (!far) continue;  // a port facing nothing known
      const Cable c = MakeCable({sw.name, p.name}, *far);
      if (cables.count(Identity(c, switch_names))) continue;
      if (Sampled(counters, c.first) || Sampled(counters, c.second)) return std::nullopt;
    }
  }
  return SwitchEvidence{.name = name, .cables = std::move(named)};
}

}  // namespace fdrill

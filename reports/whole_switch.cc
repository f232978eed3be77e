#include "reports/whole_switch.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace fdrill {

namespace {

using End = std::pair<std::string, std::string>;  // (node or switch, its link or port)
using Cable = std::pair<End, End>;                // ends in order

Cable MakeCable(End a, End b) { return a < b ? Cable{a, b} : Cable{b, a}; }

// Every cable of the fabric that has a switch port at one end, by each of
// its ends.
std::map<End, Cable> CablesByEnd(const std::vector<InventorySwitch>& switches) {
  std::map<End, Cable> out;
  for (const InventorySwitch& sw : switches) {
    for (const InventoryPort& p : sw.ports) {
      const auto far = p.FarEnd();
      if (!far) continue;
      const Cable c = MakeCable({sw.name, p.name}, *far);
      out[c.first] = c;
      out[c.second] = c;
    }
  }
  return out;
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
  const std::map<End, Cable> by_end = CablesByEnd(switches);

  // The cables of the comparable links, and the switches all of them end on.
  const double floor = links.front().score / 3;
  std::set<Cable> cables;
  std::vector<std::string> named;
  std::optional<std::set<std::string>> shared;
  for (const LinkEvidence& l : links) {
    if (l.score < floor) break;  // strongest first
    if (l.retrans_only) continue;
    auto it = by_end.find({l.node, l.link});
    const bool on_a_switch = switch_names.count(l.node) > 0;
    // A link no switch port faces: a node's other link says the fault is
    // not the switch's alone; a switch's own uncabled link (its bridge, as
    // the emulated fabric's br0) is the switch itself.
    if (it == by_end.end() && !on_a_switch) return std::nullopt;
    std::set<std::string> ends_on;
    if (it == by_end.end()) {
      ends_on.insert(l.node);
    } else {
      for (const End* e : {&it->second.first, &it->second.second})
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
    if (it != by_end.end() && cables.insert(it->second).second)
      named.push_back(l.node + " " + l.link);
  }
  if (cables.size() < 2 || !shared || shared->size() != 1) return std::nullopt;
  const std::string& name = *shared->begin();

  // Every sampled cable of that switch has evidence.
  for (const InventorySwitch& sw : switches) {
    if (sw.name != name) continue;
    for (const InventoryPort& p : sw.ports) {
      auto it = by_end.find({sw.name, p.name});
      if (it == by_end.end()) continue;  // a port facing nothing known
      const Cable& c = it->second;
      if (cables.count(c)) continue;
      if (Sampled(counters, c.first) || Sampled(counters, c.second)) return std::nullopt;
    }
  }
  return SwitchEvidence{.name = name, .cables = std::move(named)};
}

}  // namespace fdrill

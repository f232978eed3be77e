#include "harness/controller/residue.h"

#include <map>

#include "common/wire/protocol.h"

namespace fdrill {

Json SnapshotResidue(const std::string& node, Json before_state, const Result<Json>& after) {
  Json residue = Json::array();
  if (!after.ok()) {
    residue.push_back({{"node", node},
                       {"object", "snapshot"},
                       {"before", "taken"},
                       {"after", after.status().message()}});
    return residue;
  }
  std::map<std::string, Json> before;
  // before_state is a copy: [] on a null one (a snapshot never taken) reads as no links.
  for (const auto& l : before_state[proto::key::kLinks])
    before[l[proto::key::kName].get<std::string>()] = l;
  for (const auto& l : (*after)[proto::key::kLinks]) {
    std::string name = l[proto::key::kName];
    auto it = before.find(name);
    if (it == before.end()) {
      residue.push_back({{"node", node}, {"object", name}, {"before", nullptr}, {"after", l}});
      continue;
    }
    // qdisc_tree: every qdisc with its options, so a switch port's tbf and
    // queue must come back exactly, not only its root's kind (agents that
    // predate it send none: null on both sides).
    for (const char* key : {proto::key::kAdminUp, proto::key::kQdisc, proto::key::kQdiscHandle,
                            proto::key::kQdiscTree}) {
      const Json was = it->second.value(key, Json());
      const Json now = l.value(key, Json());
      if (was != now) {
        residue.push_back(
            {{"node", node}, {"object", name + " " + key}, {"before", was}, {"after", now}});
      }
    }
    before.erase(it);
  }
  for (const auto& [name, l] : before) {
    residue.push_back({{"node", node}, {"object", name}, {"before", l}, {"after", nullptr}});
  }
  // Process and host faults: stopped ranks, fdrill-burn processes and
  // cgroups (agents that predate the "host" snapshot send none).
  const Json none = Json::object();
  const Json& host_before =
      before_state.contains(proto::key::kHost) ? before_state[proto::key::kHost] : none;
  const Json& host_after = after->contains(proto::key::kHost) ? (*after)[proto::key::kHost] : none;
  for (const char* key : {proto::key::kStoppedRanks, proto::key::kBurners, proto::key::kBurnCgroups,
                          proto::key::kFdrillRules}) {
    if (host_before.contains(key) && host_after.contains(key) &&
        host_before[key] != host_after[key]) {
      residue.push_back({{"node", node},
                         {"object", std::string("host ") + key},
                         {"before", host_before[key]},
                         {"after", host_after[key]}});
    }
  }
  return residue;
}

}  // namespace fdrill

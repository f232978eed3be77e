// DrillTargets: what a drill dials and launches on, resolved once before it
// starts — from the emulated fabric's state (DrillTargetsOfFabric) or a real
// cluster's hosts (DrillTargetsOfHosts), both in agent_set.h — so the drill
// itself never reads the emulated fabric's internals, which a real cluster
// does not have. A plain value: the drill and its components hold it by
// const reference for the drill's length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/core/json.h"
#include "fabric/fabric_shape.h"  // the scenario's own type (Scenario::emulated)

namespace fdrill {

// One agent: a node of the drill, or a switch a fault may name.
struct DrillTarget {
  std::string name;  // the name it answers to at hello (and its certificate names)
  std::string host;  // where to dial it: an address, or a name DNS resolves
  uint16_t port = 7100;
  std::string tmpdir;     // its TMPDIR until its hello says otherwise
  std::string fabric_ip;  // emulated: rail 0's address (mpirun's hostfile, MASTER_ADDR); else ""
  bool has_agent = true;  // false: a switch of a fabric built before switch agents
};

struct DrillTargets {
  // The drill's nodes are the first Scenario::nodes of these, in order.
  std::vector<DrillTarget> nodes;
  // The emulated fabric's switches (with or without an agent); empty on a
  // real cluster, whose switches are named by its topology file.
  std::vector<DrillTarget> switches;
  // Emulated: every rail's /24, rail 0 first (mpirun's *_if_include, the
  // rails' interfaces); empty on a real cluster.
  std::vector<std::string> rail_subnets;
  // Emulated: the fabric that is up, `nodes` its node count.
  FabricShape shape;
  // Emulated: the fabric's own certificates ("" on a real cluster, or when
  // its agents run --insecure).
  std::string pki_dir;
  // Emulated: its switches and cabling as inventory.json lists them
  // (docs/reference/formats.md "switches"); null when it has none.
  Json cabling;

  // A switch by name, or null.
  const DrillTarget* FindSwitch(const std::string& name) const {
    for (const DrillTarget& t : switches) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
  // A node by name, or null.
  const DrillTarget* FindNode(const std::string& name) const {
    for (const DrillTarget& t : nodes) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
};

}  // namespace fdrill

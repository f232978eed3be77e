// What a cluster operator knows about the fabric, as a topology file says it
// (schema: scenarios/README.md, "Topology and blast radius"):
//   rails:           rail k = the k-th HCA/NIC on every node (rail-optimised
//                    fabrics: each rail is its own set of leaf switches)
//   leaves:          leaf switches and the nodes cabled to them, per rail;
//                    optionally their ports: what each is cabled to and its
//                    capacity (`fdrill fabric up` writes them)
//   spines:          spine switches joining a rail's leaves, with their ports
//   nvlink_domains:  NVLink/NVSwitch domains (an NVL72 rack, one HGX node)
// Loading is pure and strict: unknown keys, a node on two leaves of one rail
// or in two NVLink domains, a device or netdev on two rails, and bad
// hostlists, a port cabled to a node not on its leaf or to a switch port that
// does not point back, are errors reading "FILE:LINE:COL: what". Queries never fail:
// they say "not in the topology" with nullopt. Immutable once loaded.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/core/result.h"

namespace fdrill {

struct Rail {
  std::string name;
  std::vector<std::string> devices;     // HCA names as /sys/class/infiniband has them (mlx5_0)
  std::vector<std::string> interfaces;  // netdevs on the same rail (ib0, eth2)
  // The nodes with these names on this rail; nullopt: every node (the usual
  // rail-optimised cluster, where every node has the same HCAs).
  std::optional<std::set<std::string>> nodes;
  bool HasNode(const std::string& node) const { return !nodes || nodes->count(node) > 0; }
};

// A switch port: what is cabled to it ("n0:fab0" for a node's interface,
// "rail0-spine:dn0" for another switch's port) and the capacity it carries.
struct TopologyPort {
  std::string name;       // "swp0", "up0", "dn1"
  std::string to;         // "NODE:IFNAME" or "SWITCH:PORT"
  uint64_t rate_bps = 0;  // 0: not given
  // `to` as (node or switch, its interface or port); a loaded port's `to`
  // has both (the loader refuses one without).
  std::pair<std::string, std::string> FarEnd() const {
    const size_t colon = to.find(':');
    if (colon == std::string::npos) return {to, ""};
    return {to.substr(0, colon), to.substr(colon + 1)};
  }
};

struct Leaf {
  std::string name;
  std::set<std::string> nodes;
  std::vector<std::string> rails;   // empty: every rail of its nodes is cabled to it
  std::vector<TopologyPort> ports;  // empty: the file does not say
};

struct Spine {
  std::string name;
  std::vector<std::string> rails;
  std::vector<TopologyPort> ports;
};

struct NvlinkDomain {
  std::string name;
  std::set<std::string> nodes;
};

struct Topology {
  std::string file;
  std::vector<Rail> rails;
  std::vector<Leaf> leaves;
  std::vector<Spine> spines;
  std::vector<NvlinkDomain> nvlink_domains;

  // The ports of the leaf or spine NAME; nullptr when no switch has it.
  const std::vector<TopologyPort>* SwitchPorts(const std::string& name) const;

  // The rail NODE's HCA or netdev NAME is on.
  std::optional<std::string> RailOf(const std::string& node, const std::string& name) const;
  // Every rail NODE has, in file order.
  std::vector<std::string> RailsOf(const std::string& node) const;
  // The leaf NODE's port on RAIL is cabled to (a leaf listing no rails takes
  // any rail of its nodes).
  std::optional<std::string> LeafOf(const std::string& node, const std::string& rail) const;
  std::optional<std::string> NvlinkDomainOf(const std::string& node) const;
};

// Whether PATH names a topology file rather than a drill: its file name
// starts with "topology" and ends in .yaml (topology.yaml,
// topology.example.yaml, topology.rack2.yaml). `fdrill validate` and the
// scenario library test tell the two apart by this alone.
bool IsTopologyFile(const std::string& path);

// Reads and validates PATH (a regular file of at most 16 MiB).
Result<Topology> LoadTopology(const std::string& path);
// FILE_NAME is only for messages.
Result<Topology> ParseTopology(const std::string& text, const std::string& file_name);

}  // namespace fdrill

// The emulated fabric's shape — nodes x rails x leaves, oversubscription,
// port rate — and the names its rails and switches get. Shared by `fdrill
// fabric up` (flags) and the scenario loader (fabric.emulated keys), so a
// drill and the fabric it runs on agree on what "rail1-leaf0" is. Pure.
#pragma once

#include <cstdint>
#include <string>

#include "common/core/status.h"

namespace fdrill {

inline constexpr int kMaxFabricNodes = 200;  // node addresses .1-.200 of one /24
inline constexpr int kMaxFabricRails = 8;
inline constexpr int kMaxFabricLeaves = 16;  // per rail

struct FabricShape {
  int nodes = 4;
  int rails = 1;                // fabric interfaces per node, one rail each
  int leaves = 1;               // leaf switches per rail; divides nodes
  double oversubscription = 1;  // K: an uplink carries port rate x nodes per leaf / K
  uint64_t port_rate_bps = 0;   // 0: no capacity modelled (ports and uplinks unshaped)

  int NodesPerLeaf() const { return nodes / leaves; }
  bool Flat() const { return rails == 1 && leaves == 1; }
  uint64_t UplinkRateBps() const;  // 0 when ports are unshaped
  bool operator==(const FabricShape&) const = default;
  // "8 nodes x 2 rails x 2 leaves, ports 100mbit, uplinks 50mbit (8:1)"
  std::string Describe() const;
  // "--nodes 8 --rails 2 --leaves 2 --oversubscription 8 --port-rate 100mbit"
  // (only what differs from the defaults after --nodes).
  std::string UpFlags() const;
};

// What the shape's fields are called where they were given: `fabric up`'s
// flags, or a scenario's fabric.emulated keys.
struct ShapeNames {
  const char* nodes;
  const char* rails;
  const char* leaves;
  const char* oversubscription;
  const char* port_rate;
  static ShapeNames Flags();     // --nodes, --rails, ...
  static ShapeNames Scenario();  // fabric.emulated.nodes, ...
};

// InvalidArgument naming the field and what would be right when the shape
// cannot be built: out of range, leaves that do not divide the nodes, an
// oversubscription without a port rate or without uplinks.
Status CheckShape(const FabricShape& shape, const ShapeNames& names = ShapeNames::Flags());

std::string RailName(int rail);  // "rail0"
// "sw" for the flat fabric's one switch, else "rail<r>-leaf<l>".
std::string LeafName(const FabricShape& shape, int rail, int leaf);
std::string SpineName(int rail);  // "rail<r>-spine"

}  // namespace fdrill

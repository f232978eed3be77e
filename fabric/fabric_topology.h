// The emulated fabric's map, as a topology file (schema: scenarios/README.md,
// "Topology files"): `fdrill fabric up` writes it to
// <state_dir>/topology.yaml, and a drill with `topology: emulated` reads the
// same text for the shape it declares. Rails name the node interfaces
// (fab<r>), leaves their nodes and ports (swp<i> -> n<i>:fab<r>, up0 ->
// the spine), spines their ports (dn<l> -> the leaf's up0), each port with
// its modelled capacity when the fabric has one. A function of the shape
// alone (PlanFabric builds exactly this; fabric_topology_test holds them to
// it). Pure.
#pragma once

#include <string>

#include "fabric/fabric_shape.h"

namespace fdrill {

std::string TopologyYaml(const FabricShape& shape);

// <state_dir>/topology.yaml.
std::string TopologyPath(const std::string& state_dir);

}  // namespace fdrill

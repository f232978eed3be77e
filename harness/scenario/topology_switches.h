// A real cluster's switches as inventory.json lists them ("switches": each
// with its ports and what each is cabled to, as `fdrill fabric up` gives the
// emulated fabric's), from the drill's topology file and what the agents
// found. The report's fabric map draws them, and the culprit may then name a
// whole switch (reports/whole_switch.h): a dead leaf is every cable of it
// rising at once, not one of its cables.
//
// A leaf whose ports the file lists keeps them. A leaf that lists only its
// nodes (and rails) gets, for each node and rail it carries, a port per
// netdev of that rail the node has (all of them where its agent could not
// say), named NODE/NETDEV and cabled to NODE:NETDEV: the file does not say
// the switch's own port names. Each HCA port of a rail's
// device (the agents' inventory: hcas[].ports[]) is the same cable as the
// netdev the kernel shows on it (IPoIB ib0 on mlx5_0 port 1), so it is
// listed again under that port's name, cabled to NODE:ib/DEVICE/PORT, as
// the agent's counters name it; an HCA port with no netdev of the rail gets
// a port of its own (NODE/DEVICE/PORT). A port runs at the rate the file
// gives it, or else at the one its node end came up at: the netdev's speed
// (sysfs `speed`), the HCA port's rate (sysfs `rate`, else its netdev's);
// 0 where neither is known. A spine keeps the ports the file
// lists (none: nothing is known of its cables); a switch of one rail says
// which ("rail"). A cluster's file lists
// every leaf; only those cabled to a node of the drill are the run's, and
// the spines but those whose listed ports all face other leaves. Pure.
#pragma once

#include "common/core/json.h"
#include "harness/scenario/topology.h"

namespace fdrill {

// INVENTORY: `fdrill inventory --json`'s object ({"nodes": [{"node",
// "hcas": [{"name", "ports": [{"port", "netdevs"}]}]}]}); a node it lacks,
// or one whose agent could not say, gets its netdevs' cables only.
// Its "nodes" are the drill's.
Json TopologySwitches(const Topology& topology, const Json& inventory);

}  // namespace fdrill

// FormatInventoryTable: the operator's view of `fdrill inventory`, in the
// spirit of `nvidia-smi topo -m` and `ibstat` summaries. Pure formatting: no
// I/O, no agents; the caller gathers the inventories.
//
// Input: {"nodes": [<agent inventory>, ...]}, each one an `inventory` reply
// (agents/inventory.h, docs/reference/formats.md) with its "node"; a node the
// controller could not ask may be {"node": "n3", "error": "why"}.
//
// Output, two aligned tables and then notes:
//   NODE  GPUS                   NVLINK   HCA PORTS                   NETDEVS
//   n1    8x NVIDIA H100 80GB..  143/144  mlx5_0/1 ACTIVE 400G IB     fab0 100G, ib0 400G
//
//   NODE  HCA     PORT  STATE   PHYS    RATE                 LAYER       LID  NETDEVS  NUMA  FW
//   n1    mlx5_0  1     ACTIVE  LinkUp  400 Gb/sec (4X NDR)  InfiniBand  5    ib0 0     28.39.1002
//
//   n2: NVML: libnvidia-ml.so.1 not found: ...
// GPUS groups identical models ("4x A, 4x B"); NVLINK is links up / links
// NVML reports; a port's layer reads IB or RoCE (RDMA over Ethernet); a
// netdev's speed is "100G" / "100M", "down" when its operstate is not up,
// "?" when the kernel gives none. An absent field prints "-".
#pragma once

#include <string>

#include "common/wire/wire.h"

namespace fdrill {

std::string FormatInventoryTable(const Json& cluster);

// The emulated fabric's switches, when cluster has "switches" (`fdrill
// inventory` on the emulated fabric adds them from fabric.json):
//   SWITCH        ROLE   RAIL  PORTS
//   rail0-leaf0   leaf   0     swp0 -> n0:fab0 500mbit, ..., up0 -> rail0-spine:dn0 1gbit
// "" when there are none.
std::string FormatSwitchTable(const Json& cluster);

}  // namespace fdrill

// DiscoverInventory: what this node has — GPUs and their NVLinks (NVML),
// InfiniBand/RoCE HCAs and their ports, network interfaces, NUMA nodes —
// read from sysfs and NVML. Reads only; nothing is changed, and it is cheap
// enough to answer an `inventory` request at any time (a few hundred small
// files and, per GPU, one NVML call per possible NVLink).
//
// The JSON it returns (docs/reference/formats.md, "Inventory"):
//   {"gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-...",
//              "pci_bus_id": "00000000:18:00.0",
//              "nvlinks": [{"link": 0, "state": "up" | "down",
//                           "remote_pci_bus_id": "00000000:05:00.0"}]}],
//    "nvml": "ok" | "<why not: libnvidia-ml.so.1 not found: ...>",
//    "hcas": [{"name": "mlx5_0", "node_guid": "b859:9f03:00d4:f3a6", "fw_ver": "28.39.1002",
//              "numa_node": 0,
//              "ports": [{"port": 1, "state": "ACTIVE", "phys_state": "LinkUp",
//                         "link_layer": "InfiniBand" | "Ethernet",
//                         "rate": "400 Gb/sec (4X NDR)", "rate_gbps": 400, "lid": 5,
//                         "netdevs": ["ib0"]}]}],
//    "netdevs": [{"name": "ib0", "operstate": "up", "speed_mbps": 400000, "mtu": 4092,
//                 "mac": "00:00:10:49:fe:80:...", "numa_node": 0, "ib_device": "mlx5_0"}],
//    "numa": [{"node": 0, "cpus": "0-63"}]}
// A file that is missing or unreadable leaves its field out (a down link has
// no speed; a VM has no numa_node; NVML may lack a call); a missing root
// means "none of those" (no HCA driver loaded: "hcas": []), not an error.
// numa_node is as the kernel prints it: -1 means no affinity. lo is left out.
// The netdevs are those of the agent's own network namespace (/proc/net/dev),
// even where /sys/class/net shows another's (InventoryPaths::net_dev).
//
// sysfs facts (torvalds/linux Documentation/ABI/stable/sysfs-class-infiniband
// and sysfs-class-net; rdma-core's ibstat and Mellanox's ibdev2netdev read
// the same files):
//   IB/DEV/node_guid, fw_ver, device/numa_node
//   IB/DEV/ports/N/state "4: ACTIVE", phys_state "5: LinkUp", link_layer,
//                  rate "400 Gb/sec (4X NDR)", lid "0x5" (hex; 0 on RoCE)
//   IB/DEV/device/net/IF/    the netdevs of that PCI function; which port
//                  each belongs to is IF's dev_port (0-based, so port
//                  dev_port + 1; a single-port HCA's netdev has dev_port 0)
//   NET/IF/operstate, speed (Mb/s; unreadable or -1 while down), mtu,
//       address, device/numa_node, device/infiniband/DEV (the reverse map)
//   NODE/nodeN/cpulist "0-63"
#pragma once

#include <string>

#include "common/host/gpus.h"
#include "common/host/host.h"
#include "common/wire/wire.h"

namespace fdrill {

struct InventoryPaths {
  std::string infiniband = "/sys/class/infiniband";
  std::string net = "/sys/class/net";
  // The agent's own network namespace's interfaces (sysfs may show
  // another's): which netdevs there are; /sys/class/net then describes them
  // when it lists the same ones, else each is its name alone.
  std::string net_dev = "/proc/net/dev";
  std::string numa = "/sys/devices/system/node";
};

// `gpus` null: no NVML on this host ("nvml": "not used ..."). An NVML that
// does not load reports why in "nvml" and "gpus" is empty; sysfs is still
// read. Errors only when a root exists but cannot be listed.
Result<Json> DiscoverInventory(SysFs& sysfs, Gpus* gpus, const InventoryPaths& paths = {});

// The GPU half alone: {"gpus": [...], "nvml": "ok" | why}.
Json DiscoverGpus(Gpus* gpus);

}  // namespace fdrill

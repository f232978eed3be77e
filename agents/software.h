// What software a node runs, for the regression tests operators run across
// firmware and driver updates (`fdrill compare` prints what differs between
// two runs' nodes first): the kernel, the versions of the drivers that move
// a collective's bytes, and the sysctls that shape its transport. Part of
// the agent's inventory (agents/inventory.h) as "software":
//   {"kernel": "6.1.0-18-amd64",
//    "modules": {"mlx5_core": "24.10-1.1.4", "ib_core": "srcversion 8F2C...",
//                "nvidia": "550.54.15"},
//    "sysctl": {"net.ipv4.tcp_congestion_control": "cubic",
//               "net.ipv4.tcp_rmem": "4096 131072 6291456", ...}}
// HCA firmware (hcas[].fw_ver) and MTU (netdevs[].mtu) are in the inventory
// already; the agent adds "fdrill" (its own version).
//
// Sources, all read-only: /proc/sys/kernel/osrelease (uname -r);
// /sys/module/M/version — an out-of-tree driver's (MLNX_OFED, NVIDIA's)
// MODULE_VERSION — else /sys/module/M/srcversion (an in-tree module's
// source checksum: it changes when the code does), for M in kModules when
// loaded; /proc/sys/<path with / for .> for kSysctls. An emulated node's
// agent reads /proc/sys/net in its own network namespace, so a per-node
// change (tcp_congestion_control is per namespace) shows per node. A file
// that cannot be read leaves its key out.
#pragma once

#include <string>

#include "common/host/host.h"
#include "common/wire/wire.h"

namespace fdrill {

struct SoftwarePaths {
  std::string proc_sys = "/proc/sys";
  std::string modules = "/sys/module";
};

// The drivers whose version is the node's fingerprint: Mellanox/NVIDIA HCA
// (mlx5_core, mlx5_ib), the RDMA core (ib_core, ib_uverbs, rdma_cm),
// GPUDirect RDMA (nvidia_peermem, nv_peer_mem), the GPU driver (nvidia),
// other RDMA NICs (bnxt_re, irdma, efa).
extern const char* const kModules[11];
// net.ipv4.tcp_congestion_control, tcp_rmem/wmem, core r/wmem_max,
// default_qdisc, tcp_ecn, tcp_sack, tcp_timestamps, tcp_mtu_probing, and
// vm.zone_reclaim_mode / kernel.numa_balancing (NCCL's tuning guides).
extern const char* const kSysctls[12];

Json DiscoverSoftware(SysFs& sysfs, const SoftwarePaths& paths = {});

}  // namespace fdrill

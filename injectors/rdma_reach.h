// Does a fault reach an RDMA workload's traffic? NCCL and UCX move data
// over InfiniBand and RoCE with verbs, which bypass the kernel's qdiscs and
// netfilter (injector.h, Reach). A netdev with an RDMA port behind it
// carries that traffic beside its kernel TCP/IP; a fault whose kind reaches
// only the kernel's on such a netdev leaves the collective untouched, and a
// drill that ran it would report "no slowdown" for a fault the job never
// felt. The agent's pre-drill check refuses it, naming the kinds that do
// reach the port.
//
// The RDMA port behind a netdev, from sysfs (Documentation/ABI/stable/
// sysfs-class-infiniband; as rdma-core's ibdev2netdev and the inventory
// find it): /sys/class/net/IF/device/infiniband/<dev> is the HCA of the
// netdev's PCI function, its port dev_port + 1 (/sys/class/net/IF/dev_port),
// and /sys/class/infiniband/<dev>/ports/<n>/link_layer says InfiniBand or
// Ethernet (RoCE).
#pragma once

#include <optional>
#include <string>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/host/host.h"
#include "injectors/injector.h"

namespace fdrill {

struct RdmaPort {
  std::string device;      // "mlx5_0"
  int port = 1;            // 1-based, as ibstat numbers them
  std::string link_layer;  // "InfiniBand" or "Ethernet"
  bool Roce() const { return link_layer == "Ethernet"; }
  unsigned Reach() const { return Roce() ? kReachRoce : kReachIbRdma; }
};

// The RDMA port behind netdev `ifname`; nullopt when it has none (a veth, a
// plain Ethernet NIC, no RDMA driver loaded).
Result<std::optional<RdmaPort>> RdmaPortBehind(
    SysFs& sysfs, const std::string& ifname, const std::string& net_root = "/sys/class/net",
    const std::string& ib_root = "/sys/class/infiniband");

// For a workload whose data moves over RDMA: Ok when a fault of kind `info`
// with `params` reaches it or touches no netdev with an RDMA port behind it;
// FailedPrecondition naming the interface, the port, what the kind reaches
// and the kinds that reach the port otherwise. Kinds of interface scope
// only; without params.interface every netdev of the node is considered.
Status CheckReachesRdma(const InjectorInfo& info, const Json& params, SysFs& sysfs,
                        const std::string& net_root = "/sys/class/net",
                        const std::string& ib_root = "/sys/class/infiniband");

}  // namespace fdrill

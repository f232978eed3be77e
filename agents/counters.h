// The node's fabric counters, sampled every telemetry interval (AgentConfig::
// telemetry_interval, 1 s by default) while a metrics directory is watched
// (a workload's run, launched by the agent or not) and pushed to the
// controller as `counters` events (docs/reference/formats.md). SampleTelemetry merges
// three sources into one flat {name: number} object, every value cumulative
// (reports take per-phase deltas):
//
// 1. Netdevs (SampleCounters below), "<if>.<counter>". Per
// interface (every one but lo and the management interface) the kernel's
// stats64 — rx/tx bytes, packets, errors, dropped — and its root qdisc's
// drops and overlimits (what tbf/htb shaping shows). Names are
// "<interface>.<counter>", values cumulative; reports take per-phase deltas
// and name the link whose drops/errors rose most during a fault.
// Also "<if>.carrier_changes" (/sys/class/net/IF/carrier_changes: a flap
// rises it by two, a link down by one) and, for the node's network
// namespace, the transport's loss signals "tcp.retrans_segs",
// "tcp.in_errs" (/proc/net/snmp), "tcp.timeouts" and
// "tcp.lost_retransmits" (/proc/net/netstat) — read only on the
// /proc/net/dev path below.
// Interface counters come from /proc/net/dev when `sysfs` can read it (it is
// /proc/self/net/dev: the agent's own network namespace, which /sys/class/net
// may not be; and no process to start — `ip` every second was a third of an
// idle agent's CPU, docs/performance.md), else from `ip -s -j link`. Both
// read the kernel's 64-bit link stats; /proc/net/dev's rx drop also counts
// rx_missed_errors (NIC ring overflows), which `ip` lists apart. Qdisc
// counters come from one rtnetlink qdisc dump (the host's NetStack; `tc -s
// -j qdisc show` where the host has none).
//
// 1b. Per link, the TCP segments the node retransmitted through it,
//    "<if>.tcp_retrans_segs" (sock_diag; agents/tcp_link_retrans.h): the
//    sender's view of loss that no netdev counter of its own shows.
//
// 2. InfiniBand / RoCE ports (SampleIbCounters), "ib/<dev>/<port>.<counter>",
//    from IB/DEV/ports/N/counters/ (Documentation/ABI/stable/sysfs-class-
//    infiniband): port_xmit_data, port_rcv_data, port_xmit_packets,
//    port_rcv_packets, symbol_error, link_error_recovery, link_downed,
//    port_rcv_errors, port_xmit_discards, port_xmit_wait. The two *_data
//    counters count units of 4 octets (the PMA's PortXmitData/PortRcvData,
//    "divided by 4"); the key keeps the kernel's name but the value is in
//    bytes (x4). port_xmit_wait is in ticks of the PMA's sample clock, left
//    as is. Also every file of ports/N/hw_counters/ (the driver's own:
//    mlx5's out_of_buffer, np_cnp_sent, rp_cnp_handled, ...) under its own
//    name, except `lifespan` (the driver's refresh period in ms, a setting).
//    A missing counter file is left out.
//
// 3. NVLink (SampleNvLinkCounters), "gpu<i>/nvlink<l>.<counter>", through
//    NVML field values, one nvmlDeviceGetFieldValues call per GPU asking
//    every link number NVML can name (scopeId = link): tx_bytes / rx_bytes
//    (NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX, payload, counted in KiB by
//    NVML, x1024 here), dl_replay, dl_recovery, dl_crc
//    (NVML_FI_DEV_NVLINK_ERROR_DL_*). Links and fields NVML answers with an
//    error (no such link; Blackwell dropped the DL error fields) are left
//    out.
#pragma once

#include <string>
#include <string_view>

#include "common/host/gpus.h"
#include "common/host/host.h"
#include "common/host/net_stack.h"
#include "common/wire/wire.h"

namespace fdrill {

class TcpLinkRetrans;

struct TelemetrySources {
  std::string mgmt_interface;  // never sampled
  std::string infiniband = "/sys/class/infiniband";
  Gpus* gpus = nullptr;  // null: no NVLink counters
  // "<if>.tcp_retrans_segs" (agents/tcp_link_retrans.h); null: none.
  TcpLinkRetrans* tcp_links = nullptr;
  // Root qdisc counters over rtnetlink (common/host/net_stack.h); null:
  // `tc -s -j qdisc show` on the runner.
  NetStack* net = nullptr;
};

// One sample of everything above. Fails only when no source answered at
// all (the netdev sample failed and there is no IB or NVLink counter).
Result<Json> SampleTelemetry(ProcessRunner& runner, SysFs* sysfs, const TelemetrySources& sources);

// Adds "ib/<dev>/<port>.<counter>" for every port under `root` to `out`.
void SampleIbCounters(SysFs& sysfs, const std::string& root, Json& out);

// Adds "gpu<i>/nvlink<l>.<counter>" to `out`; nothing when NVML cannot count GPUs.
void SampleNvLinkCounters(Gpus& gpus, Json& out);

// --telemetry-interval: a duration (common/core/units.h: "250ms", "1s",
// "10s") from 100 ms to 1 h. Faster floods the controller (every agent
// pushes a sample); slower than an hour sees no fault window at all.
constexpr Duration kMinTelemetryInterval = std::chrono::milliseconds(100);
constexpr Duration kMaxTelemetryInterval = std::chrono::hours(1);  // the error message names both
Result<Duration> ParseTelemetryInterval(std::string_view text);

// The latest point at or before `now` of `node`'s sample grid: every
// `every`, shifted by a phase fixed by the node's name. The nodes of a drill
// take their leases in one fan-out; on one grid they would all sample and
// push their counters in the same instant each interval (at 10,000 nodes a
// burst of 10,000 messages at the controller every second, and the burst
// lands on whatever the drill does then). On their own grids the pushes
// spread over the interval.
std::chrono::steady_clock::time_point SampleGridPoint(std::chrono::steady_clock::time_point now,
                                                      Duration every, const std::string& node);

// Adds the kTransportCounters keys ("tcp.retrans_segs", ...) found in
// /proc/net/snmp or /proc/net/netstat text (pairs of "Section: names" and
// "Section: values" lines) to `out`; anything else is ignored.
void ParseProcNetStats(const std::string& text, Json& out);

// The netdev part alone.
// `net` null: the iproute2 tools on `runner` (net_stack.h).
Result<Json> SampleCounters(ProcessRunner& runner, SysFs* sysfs, const std::string& mgmt_interface,
                            NetStack* net = nullptr);

// Parses /proc/net/dev text into `out` ("<if>.rx_bytes", ...); false when
// it is not in that format.
bool ParseProcNetDev(const std::string& text, const std::string& mgmt_interface, Json& out);

}  // namespace fdrill

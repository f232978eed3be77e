// The node's fabric counters, sampled once a second while a workload runs
// and pushed to the controller as `counters` events (docs/formats.md): per
// interface (every one but lo and the management interface) the kernel's
// stats64 — rx/tx bytes, packets, errors, dropped — and its root qdisc's
// drops and overlimits (what tbf/htb shaping shows). Names are
// "<interface>.<counter>", values cumulative; reports take per-phase deltas
// and name the link whose drops/errors rose most during a fault.
// Interface counters come from /proc/net/dev when `sysfs` can read it (it is
// /proc/self/net/dev: the agent's own network namespace, which /sys/class/net
// may not be; and no process to start — `ip` every second was a third of an
// idle agent's CPU, docs/performance.md), else from `ip -s -j link`. Both
// read the kernel's 64-bit link stats; /proc/net/dev's rx drop also counts
// rx_missed_errors (NIC ring overflows), which `ip` lists apart. Qdisc
// counters come from `tc -s -j qdisc` (netlink).
#pragma once

#include <string>

#include "harness/host/host.h"
#include "harness/wire/wire.h"

namespace fdrill {

Result<Json> SampleCounters(ProcessRunner& runner, SysFs* sysfs, const std::string& mgmt_interface);

// Parses /proc/net/dev text into `out` ("<if>.rx_bytes", ...); false when
// it is not in that format.
bool ParseProcNetDev(const std::string& text, const std::string& mgmt_interface, Json& out);

}  // namespace fdrill

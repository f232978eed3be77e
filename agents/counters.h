// The node's fabric counters, sampled once a second while a workload runs
// and pushed to the controller as `counters` events (docs/formats.md): per
// interface (every one but lo and the management interface) the kernel's
// stats64 — rx/tx bytes, packets, errors, dropped — and its root qdisc's
// drops and overlimits (what tbf/htb shaping shows). Names are
// "<interface>.<counter>", values cumulative; reports take per-phase deltas
// and name the link whose drops/errors rose most during a fault.
// Read through `ip -s -j link` and `tc -s -j qdisc` (netlink, so they see the
// agent's own network namespace, which /sys/class/net may not).
#pragma once

#include <string>

#include "harness/host/host.h"
#include "harness/wire/wire.h"

namespace fdrill {

Result<Json> SampleCounters(ProcessRunner& runner, const std::string& mgmt_interface);

}  // namespace fdrill

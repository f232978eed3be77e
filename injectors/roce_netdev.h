// What the kinds that act on a RoCE port's Ethernet side share: roce_tc_rate
// and roce_pfc (IEEE 802.1Qaz ETS maxrate and 802.1Qbb PFC, set through
// iproute2's dcb(8)) and link_speed (ethtool). These act below the kernel's
// qdiscs, in the NIC, so they reach RoCE RDMA traffic that tc and netfilter
// never see (injector.h, Reach).
//
// dcb talks DCB netlink (dcbnl) to the driver. `dcb -j OBJ show dev IF`
// prints one JSON object per call (iproute2 6.1, captured in
// tests/injectors/testdata/): `{"tc_maxrate":[0,0,0,25000000,0,0,0,0]}`,
// `{"pfc_cap":8,"macsec_bypass":false,"delay":0,"prio_pfc":[false,...]}`.
// It fails with exit 1 and one line on stderr: "Attribute read: Operation
// not supported" (a netdev without DCB ops: veth, virtio, most NICs without
// RoCE), "Attribute read: No such device", or "Attribute not found: ..."
// (DCB ops but not this object: the driver has no ieee_getmaxrate).
//
// ETS maxrate units: the kernel's struct ieee_maxrate holds kbit/s. iproute2
// before 6.18 passed dcb's rate argument to the kernel as bytes/s unconverted
// and printed the kernel's number as bytes/s (fixed by e7d4c060 "dcb: fix
// tc-maxrate unit conversions", first in v6.18.0): Debian 12's dcb 6.1 given
// `tc-maxrate 3:25gbit` writes 3125000000 kbit/s (3.125 Tbit/s, 125 times the
// ask; mlx5 keeps the cap in a u8 of Gbit/s and wraps it to 53 Gbit/s), and
// shows a 25 Gbit/s cap as 25000000 in JSON ("200Mbit" as text). fdrill
// therefore asks `dcb -V` which convention the installed dcb has and writes
// the argument so the kernel receives the intended kbit/s either way; it
// keeps every captured rate in the kernel's kbit/s.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/host/host.h"

namespace fdrill {

// `dcb -j OBJECT show dev IFNAME`, parsed. NotFound when there is no such
// netdev; Unsupported naming the device and dcb's error when the netdev has
// no DCB support or no such DCB object; FailedPrecondition otherwise. `who`
// ("roce_pfc eth2") prefixes messages.
Result<Json> DcbShow(ProcessRunner& runner, const std::string& object, const std::string& ifname,
                     const std::string& who);

// How the installed dcb converts ETS maxrate (see above).
enum class DcbRateUnits {
  kBytesAsKbit,  // iproute2 < 6.18: argument bytes/s written as kbit/s, JSON prints kbit/s
  kConverted,    // iproute2 >= 6.18: argument converted to kbit/s, JSON prints bytes/s
};
// Runs `dcb -V` ("dcb utility, iproute2-6.1.0") and picks the convention by
// its version; Internal when the version cannot be read.
Result<DcbRateUnits> ReadDcbRateUnits(ProcessRunner& runner, const std::string& who);
// The tc-maxrate argument that makes the kernel receive `kbps` kbit/s:
// "200000000bit" for 25000000 kbit/s with iproute2 < 6.18, "25000000000bit"
// from 6.18 on; "0bit" (no cap) either way.
std::string DcbRateArg(uint64_t kbps, DcbRateUnits units);
// A `dcb -j maxrate show` number as the kernel's kbit/s.
uint64_t DcbJsonRateToKbps(uint64_t value, DcbRateUnits units);

// "eth2 (mlx5_1/2 RoCE)" when sysfs shows an RDMA port behind the netdev
// (rdma_reach.h), else "eth2". Never fails: the name is for messages and
// ResolvedTarget, and a null `sysfs` gives the bare name.
std::string NetdevWithRdmaPort(SysFs* sysfs, const std::string& ifname);

// For capability probes: Ok when params.interface is absent (or not a
// string) or /sys/class/net/IF exists; NotFound naming it otherwise. No
// sysfs (the controller's validation): Ok.
Status ProbeNetdevInSysfs(SysFs* sysfs, const Json& params, const std::string& who);
// Runs a tool's version query (`dcb -V`, `ethtool --version`): Unsupported
// naming the tool and its Debian package when it is missing or fails.
Status ProbeToolVersion(ProcessRunner& runner, const std::vector<std::string>& argv,
                        const std::string& package, const std::string& who);

}  // namespace fdrill

// InfiniBand port access shared by the ib_port_* injectors: params, sysfs
// observation, ibportstate argv and its `query` output.
//
// sysfs (torvalds/linux Documentation/ABI/stable/sysfs-class-infiniband),
// under ROOT/DEV/ports/N/ (ROOT defaults to /sys/class/infiniband):
//   state       "4: ACTIVE"       1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER
//   phys_state  "5: LinkUp"       2 Polling, 3 Disabled, 5 LinkUp, ...
//   rate        "400 Gb/sec (4X NDR)"   active width and per-lane speed
//   lid         "0x3"             hex
// ibportstate (linux-rdma/rdma-core infiniband-diags/ibportstate.c), always
// with -C/-P so a host on several fabrics addresses the right port:
//   ibportstate -C DEV -P PORT LID PORT [query|enable|disable|reset]
//   ibportstate -C DEV -P PORT LID PORT width MASK | speed MASK | espeed MASK
// `enable` and `reset` write PhysPortState=Polling: the link retrains and the
// subnet manager must bring it back to ACTIVE. Enabled width/speed changes
// take effect only when the link retrains (hence `reset` after them).
// `query` prints PortInfo fields as libibmad's mad_dump_field does:
//   "LinkWidthEnabled:................1X or 4X"   (name, ':', dots to col 33)
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/host/host.h"
#include "injectors/params.h"

namespace fdrill {

constexpr int kIbStateDown = 1;
constexpr int kIbStateActive = 4;
constexpr int kIbPhysPolling = 2;
constexpr int kIbPhysDisabled = 3;
constexpr int kIbPhysLinkUp = 5;

struct IbPort {
  std::string device;  // "mlx5_0"
  int64_t port = 1;
  std::optional<int64_t> lid;  // from params; else read from sysfs at Capture
  std::string root = "/sys/class/infiniband";

  std::string Dir() const { return root + "/" + device + "/ports/" + std::to_string(port); }
  std::string Name() const { return device + "/" + std::to_string(port); }
};

// Reads params device, port (default 1), lid (optional, decimal or 0x-hex),
// sysfs_root (optional). Errors name the key.
Result<IbPort> ReadIbPortParams(ParamReader& p, const Json& params);

// "400 Gb/sec (4X NDR)" -> 400, 4, "NDR". "2.5 Gb/sec (1X SDR)" -> 2.5, 1, "SDR".
struct IbRate {
  double gbps = 0;
  int lanes = 0;
  std::string speed;
};
Result<IbRate> ParseIbRate(const std::string& text);
// Per-lane speed order, doubled so FDR10 sits between QDR and FDR; 0 unknown.
int IbSpeedRank(const std::string& speed);

struct IbPortStatus {
  int state = 0;           // 4
  std::string state_text;  // "4: ACTIVE"
  int phys = 0;            // 5
  std::string phys_text;   // "5: LinkUp"
  std::string rate;        // "400 Gb/sec (4X NDR)"
};
// NotFound naming the directory when the port does not exist.
Result<IbPortStatus> ReadIbPortStatus(SysFs* sysfs, const IbPort& port);
Result<int64_t> ReadIbLid(SysFs* sysfs, const IbPort& port);
// The LID to address the port by: params.lid when given, else sysfs.
Result<int64_t> ResolveIbLid(SysFs* sysfs, const IbPort& port);

// The LID argument of ibportstate: `captured` (the LID Capture resolved)
// when not 0, else params.lid, else a placeholder naming the sysfs file it
// will come from (for `fdrill plan`).
std::string IbLidArg(const IbPort& port, int64_t captured);
std::vector<std::string> IbPortStateArgv(const IbPort& port, const std::string& lid,
                                         const std::vector<std::string>& op);

// PortInfo as `ibportstate ... query` prints it: the width and speed fields
// (LinkWidth*, LinkSpeed*, LinkSpeedExt*: Enabled, Supported, Active) decoded
// back to their PortInfo masks, plus LinkState and PhysLinkState as text.
// Only the first PortInfo block counts (a set op prints "After PortInfo set:"
// and a switch port its peer's block after it).
struct IbPortInfo {
  std::map<std::string, int64_t> masks;  // "LinkWidthEnabled" -> 3 (1X or 4X)
  std::string link_state;                // "Active"
  std::string phys_state;                // "LinkUp"
  bool Has(const std::string& field) const { return masks.count(field) > 0; }
  int64_t Get(const std::string& field) const { return Has(field) ? masks.at(field) : 0; }
};
Result<IbPortInfo> ParseIbPortInfo(const std::string& out);
Result<IbPortInfo> QueryIbPort(ProcessRunner& runner, const IbPort& port, int64_t lid);

// Width masks of PortInfo:LinkWidth*: 1X=1, 4X=2, 8X=4, 12X=8, 2X=16.
int IbWidthBit(int lanes);      // 0 when not a width
int IbWidthLanes(int64_t bit);  // 0 when not one width bit

}  // namespace fdrill

// What infiniband-diags prints about the fabric beyond one local port, read
// back for ib_switch_port: pure text in, structs out, no I/O. Formats as
// linux-rdma/rdma-core's infiniband-diags prints them (checked against
// infiniband-diags 44.0 under ibsim: tests/injectors/testdata/README.md).
//
// `ibnetdiscover -p` (the ports report, ibnetdiscover.c dump_ports_report):
// one line per port of every node discovery reached, every port 1..N of a
// switch included, in no fixed order:
//   "%2s %5d %2d 0x%016" PRIx64 " %s %s"   type (CA, SW, RT), LID, port, GUID,
//                                          active width ("4x"), speed ("HDR")
// then, for a port with a link, its peer and both NodeDescriptions:
//   " - %2s %5d %2d 0x%016" PRIx64 " ( '%s' - '%s' )"
// or, for a port without one, "%36s'%s'" (its own NodeDescription). Two
// lines of the capture, the first cut after its peer's GUID:
//   CA     4  1 0xb8cef60300000201 4x HDR - SW     2 19 0xb8cef60300a1b3c0
//       ( 'gpu002 mlx5_0' - 'MF0;leaf02:MQM9700/U1' )
//   SW     1 36 0xb8cef60300a1b2c0 4x SDR    (36 spaces)    'MF0;leaf01:MQM9700/U1'
// A CA's LID and GUID are its port's (base LID, port GUID); a switch's are
// those of its management port 0 (the switch LID, the node GUID), whatever
// the port. A CA port whose link is down is not discovered at all: an HCA
// whose switch port is disabled is missing from the report. NodeDescriptions
// go through the node-name map when one is configured.
//
// `smpquery portinfo LID PORT` (smpquery.c port_info, libibmad dump.c):
// "# Port info: Lid 2 port 19", then one "Name:....value" line per PortInfo
// field, the value at column 33:
//   LinkState        NoChange Down Initialize Armed Active
//   PhysLinkState    Sleep Polling Disabled PortConfigurationTraining LinkUp
//                    LinkErrorRecovery PhyTest
//
// sysfs ports/N/gids/0 (drivers/infiniband/core/sysfs.c, "%pI6"):
// "fe80:0000:0000:0000:b8ce:f603:0000:0101"; its low 64 bits are the port GUID.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/core/result.h"

namespace fdrill {

// One end of a link in the ports report.
struct IbPortEnd {
  std::string type;  // "CA", "SW", "RT"
  int64_t lid = 0;   // a CA port's base LID; a switch's LID
  int64_t port = 0;
  uint64_t guid = 0;         // a CA's port GUID; a switch's node GUID
  std::string description;   // NodeDescription: "gpu002 mlx5_0"
  std::string Name() const;  // "gpu002 mlx5_0/1"
};

struct IbPortsReportLine {
  IbPortEnd port;
  std::string width;              // "4x"
  std::string speed;              // "HDR"
  std::optional<IbPortEnd> peer;  // none: nothing linked (or the link is down)
};

// Every line of `ibnetdiscover -p`; Internal naming the first line it cannot
// read. A NodeDescription containing "' - '" splits at its first occurrence.
Result<std::vector<IbPortsReportLine>> ParseIbPortsReport(const std::string& out);

// Lookups in a parsed report; nullptr when absent.
const IbPortsReportLine* FindIbPortByGuid(const std::vector<IbPortsReportLine>& report,
                                          uint64_t port_guid);  // CA and RT ports only
const IbPortsReportLine* FindIbSwitchPort(const std::vector<IbPortsReportLine>& report,
                                          int64_t switch_lid, int64_t port);
// The CA ports whose NodeDescription is `description`, sorted by port.
std::vector<const IbPortsReportLine*> FindIbCaPorts(const std::vector<IbPortsReportLine>& report,
                                                    const std::string& description);
// The NodeDescriptions of every CA in the report.
std::set<std::string> IbCaDescriptions(const std::vector<IbPortsReportLine>& report);

// "0xb8cef60300a1b3c0", as ibnetdiscover prints GUIDs.
std::string FormatIbGuid(uint64_t guid);
// "0xb8cef60300000201", "b8cef60300000201" or sysfs's "b8ce:f603:0000:0201".
Result<uint64_t> ParseIbGuid(const std::string& text);
// The port GUID in a sysfs GID: its low 64 bits.
Result<uint64_t> IbGidPortGuid(const std::string& gid);

// The link a fault names: an HCA port by NodeDescription and port number,
// a CA port by its GUID, or a switch port by the switch's LID and the port
// number. Exactly one is set.
struct IbLinkSelector {
  std::optional<std::string> hca;  // "gpu002 mlx5_0"
  int64_t hca_port = 1;
  std::optional<uint64_t> guid;
  std::optional<int64_t> switch_lid;
  std::optional<int64_t> switch_port;
};

// A switch port at the end of an HCA's link.
struct IbSwitchPortFound {
  int64_t lid = 0;
  int64_t port = 0;
  uint64_t guid = 0;         // the switch's
  std::string peer;          // the HCA port: "gpu002 mlx5_0/1"; "" when the report shows no link
  std::string Name() const;  // "switch 0xb8cef60300a1b3c0 lid 2 port 19"
};

// The switch port the selector names in `report`, as seen from the local
// port `local_name` whose port GUID is `local_guid`. Refuses (errors that
// name the params key where one is to blame): a selector matching nothing
// (listing the HCAs seen, with a did-you-mean) or several ports; a link
// that does not end at a switch port, or one between two switches; and,
// with FailedPrecondition saying to run from another node, the switch port
// the local port itself is linked to, or the local port as the victim.
Result<IbSwitchPortFound> FindSwitchPortFacing(const IbLinkSelector& selector,
                                               const std::vector<IbPortsReportLine>& report,
                                               const std::string& local_name, uint64_t local_guid);

// LinkState and PhysLinkState of `smpquery portinfo`.
struct IbSmpPortState {
  std::string link_state;  // "Active"
  std::string phys_state;  // "LinkUp"
};
Result<IbSmpPortState> ParseSmpPortInfo(const std::string& out);

}  // namespace fdrill

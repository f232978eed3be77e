// The kernel's network state an agent reads and changes: links, qdiscs,
// htb classes and u32 filters, the root qdiscs' drop counters, and an
// interface's neighbour (ARP / NDP) entries. Two
// implementations:
//  - NetlinkNetStack (netlink_net_stack.h): rtnetlink through libnl-route-3,
//    in-process, what the agent uses: an apply is one netlink request, a
//    read-back one dump, no process started.
//  - IprouteNetStack (iproute_net_stack.h): iproute2's `ip` and `tc` on a
//    ProcessRunner, for hosts that offer no netlink (the recording fakes the
//    tests assert on, the fake machine of `fdrill-agent --fake-host`).
// A NetChange is one change and also the command that makes it by hand
// (NetChange::Argv): what `fdrill plan` prints and what the iproute stack
// runs, so the two read the same to an operator.
//
// Reads describe qdiscs as `tc -j qdisc show dev IF` does: kind, handle
// ("fd1:"), parent ("" for the root, "1:1"), options. Options carry what
// fdrill compares: tbf {"rate" bytes/s, "burst" bytes}, bfifo/pfifo
// {"limit"}, netem {"delay": {"delay" s, "jitter" s}}, htb {"default"}. A
// qdisc's options are comparable with the same stack's earlier read, not
// across stacks (tc rounds a tbf's burst through its own tables).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/core/units.h"

namespace fdrill {

struct LinkState {
  std::string name;
  bool admin_up = false;  // IFF_UP: what `ip link set up/down` changes
  std::string operstate;  // "UP", "DOWN", "LOWERLAYERDOWN", ... (ip's spelling)
  std::string master;     // the bridge it is a port of ("br0"); "" for none
};

// One qdisc of an interface's tree: the root, then each child with its
// parent ("1:1"). A classful qdisc's built-in child (tbf's own bfifo) is not
// listed: it is not in the tree tc can address.
struct Qdisc {
  std::string kind;
  std::string handle;
  std::string parent;  // "" for the root
  Json options = Json::object();
  bool operator==(const Qdisc&) const = default;
};

struct HtbClass {
  std::string classid;  // "fd1:1"
  uint64_t rate_bits = 0;
};

// A u32 filter's first key, as `tc -j filter show` prints it: value and
// mask in 8 hex digits, `off` the byte offset (16: the IPv4 destination).
struct U32Filter {
  std::string flowid;  // "fd1:1"
  std::string value;
  std::string mask;
  int off = -1;
};

// One neighbour entry (IPv4 ARP or IPv6 NDP) of an interface that holds a
// link-layer address, as `ip -j neigh show dev IF` lists it. Entries without
// one (INCOMPLETE, FAILED, NOARP, NONE) are not read.
struct Neighbour {
  std::string dst;     // "198.18.0.2", "fe80::1"
  std::string lladdr;  // "02:fd:00:00:01:02"
  // ip's spelling of the NUD state: "REACHABLE", "STALE", "DELAY", "PROBE"
  // (the kernel's own, it ages them) or "PERMANENT" (an operator's).
  std::string state;
  bool permanent() const { return state == "PERMANENT"; }
  bool operator==(const Neighbour&) const = default;
};

// A root qdisc's counters, for the counters sampler ("<dev>.qdisc_drops").
struct RootQdiscCounters {
  std::string dev;
  uint64_t drops = 0;
  uint64_t overlimits = 0;
};

struct NetChange {
  enum class Op {
    kLinkUp,           // ip link set dev IF up
    kLinkDown,         // ip link set dev IF down
    kQdiscReplace,     // tc qdisc replace dev IF root|parent P handle H KIND ...
    kRootQdiscDelete,  // tc qdisc del dev IF root
    kHtbClassReplace,  // tc class replace dev IF parent H classid C htb rate R ceil R burst B
                       // cburst B
    kU32DstFilterAdd,  // tc filter add dev IF parent H protocol ip prio 1 u32 match ip dst D flowid
                       // C
    kNeighReplace,     // ip neigh replace D lladdr L dev IF nud stale|permanent
  };
  Op op = Op::kLinkUp;
  std::string ifname;
  std::string parent;      // qdisc: "" = root; class/filter: the htb's handle
  std::string handle;      // qdisc handle ("fd1:"), class id ("fd1:1"), filter flowid
  std::string kind;        // qdisc: "tbf", "htb", "bfifo", "pfifo", "netem"
  uint64_t rate_bits = 0;  // tbf, htb class
  uint64_t burst = 0;      // bytes: tbf, htb class
  uint64_t limit = 0;      // bfifo bytes / pfifo packets
  Duration latency{};      // tbf
  Duration delay{};        // netem
  Duration jitter{};       // netem
  std::string dst;         // u32: "198.18.0.2" or "198.18.0.0/24"; neigh: the IPv4/IPv6 address
  std::string lladdr;      // neigh: "02:fd:00:00:01:02"
  bool permanent = false;  // neigh: nud permanent (else stale)

  static NetChange LinkUp(std::string ifname, bool up);
  // parent "" = root.
  static NetChange Tbf(std::string ifname, std::string parent, std::string handle,
                       uint64_t rate_bits, uint64_t burst, Duration latency);
  static NetChange HtbRoot(std::string ifname, std::string parent, std::string handle);
  static NetChange Fifo(std::string ifname, std::string parent, std::string handle,
                        std::string kind, uint64_t limit);
  static NetChange Netem(std::string ifname, std::string handle, Duration delay, Duration jitter);
  static NetChange DeleteRootQdisc(std::string ifname);
  static NetChange HtbClassRate(std::string ifname, std::string parent, std::string classid,
                                uint64_t rate_bits, uint64_t burst);
  static NetChange U32Dst(std::string ifname, std::string parent, std::string dst,
                          std::string flowid);
  // A neighbour entry, created or replaced: PERMANENT as an operator's, or
  // STALE, which the kernel uses at once and re-confirms by itself (a unicast
  // probe after delay_first_probe_time) instead of resolving before the first
  // packet.
  static NetChange NeighReplace(std::string ifname, std::string dst, std::string lladdr,
                                bool permanent);

  // The iproute2 command that makes this change: for plans, messages and the
  // iproute stack.
  std::vector<std::string> Argv() const;
};

class NetStack {
 public:
  virtual ~NetStack() = default;
  // Every interface of this network namespace.
  virtual Result<std::vector<LinkState>> Links() = 0;
  // The interface's qdisc tree, root first; NotFound naming the interface
  // when it does not exist.
  virtual Result<std::vector<Qdisc>> Qdiscs(const std::string& ifname) = 0;
  virtual Result<std::vector<HtbClass>> HtbClasses(const std::string& ifname) = 0;
  virtual Result<std::vector<U32Filter>> U32Filters(const std::string& ifname) = 0;
  // Every interface's root qdisc counters.
  virtual Result<std::vector<RootQdiscCounters>> RootCounters() = 0;
  // The interface the route to IPv4 `address` leaves by (`ip route get`).
  virtual Result<std::string> RouteDevice(const std::string& address) = 0;
  // The interfaces that hold IPv4 `address` (`ip addr show to ADDR`).
  virtual Result<std::vector<std::string>> AddressDevices(const std::string& address) = 0;
  // The interface's IPv4 and IPv6 neighbour entries that hold a link-layer
  // address (Neighbour); NotFound naming the interface when it does not exist.
  virtual Result<std::vector<Neighbour>> Neighbours(const std::string& ifname) = 0;
  // Makes one change; the error names the change (its Argv) and the
  // kernel's or the tool's reason.
  virtual Status Apply(const NetChange& change) = 0;
};

// Apply each change in order, stopping at the first that fails; its error is
// annotated with `who` ("link_rate fab0").
Status ApplyEach(NetStack& net, const std::vector<NetChange>& changes, const std::string& who);

// "fd1:" / "1:1" from a 32-bit tc handle (major:minor, hex; minor 0 omitted
// as tc does); ParseTcHandle is its inverse ("root" is not a handle).
std::string FormatTcHandle(uint32_t handle);
Result<uint32_t> ParseTcHandle(const std::string& text);

}  // namespace fdrill

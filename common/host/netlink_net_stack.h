// NetStack over rtnetlink (rtnl_socket.h), in-process: the agent's network
// stack. Reads are one dump each (RTM_GETLINK, RTM_GETQDISC, RTM_GETTCLASS,
// RTM_GETTFILTER, RTM_GETNEIGH); a NetChange is one request
// (netlink_tc_codec.h builds it, a neighbour's netlink_neigh_codec.h),
// acked by the kernel before Apply returns. The messages are the ones
// tc builds for the same command (iproute2 tc/q_tbf.c, q_htb.c, q_fifo.c,
// q_netem.c, f_u32.c), with two differences that need no rate tables: rates
// say linklayer ethernet (the kernel then asks for no RTAB, sch_tbf.c /
// sch_htb.c), and a tbf's burst goes as TCA_TBF_BURST in bytes. Times the
// kernel keeps in psched ticks are ns >> 6 (PSCHED_SHIFT). Rates of 2^32
// bytes/s and more go as the RATE64 attributes. Safe to call from several
// threads (one request at a time). The socket opens on first use, in the
// calling thread's network namespace, and every later call acts there
// (interfaces are looked up over the socket, not by if_nametoindex).
#pragma once

#include <map>
#include <mutex>

#include "common/host/net_stack.h"
#include "common/host/rtnl_socket.h"

namespace fdrill {

class NetlinkNetStack final : public NetStack {
 public:
  Result<std::vector<LinkState>> Links() override;
  Result<std::vector<Qdisc>> Qdiscs(const std::string& ifname) override;
  Result<std::vector<HtbClass>> HtbClasses(const std::string& ifname) override;
  Result<std::vector<U32Filter>> U32Filters(const std::string& ifname) override;
  Result<std::vector<RootQdiscCounters>> RootCounters() override;
  Result<std::string> RouteDevice(const std::string& address) override;
  Result<std::vector<std::string>> AddressDevices(const std::string& address) override;
  Result<std::vector<Neighbour>> Neighbours(const std::string& ifname) override;
  Status Apply(const NetChange& change) override;

 private:
  // The interface's index in the socket's namespace (RTM_GETLINK by name);
  // NotFound naming it. Called with mu_ held.
  Result<int> IfIndex(const std::string& ifname);
  // The payloads of a dump of tc objects (`get`: RTM_GETQDISC/TCLASS/
  // TFILTER, answered as `reply`) of interface `ifindex` (0: every one),
  // under qdisc `parent` (0: the root's; filters only); errors say `what`.
  // Called with mu_ held.
  Result<std::vector<std::string>> DumpTc(uint16_t get, uint16_t reply, int ifindex,
                                          uint32_t parent, const std::string& what);
  // Every link's RTM_NEWLINK payload. Called with mu_ held.
  Result<std::vector<std::string>> DumpLinks();
  // Every interface's index -> name. Called with mu_ held.
  Result<std::map<int, std::string>> IfNames();

  std::mutex mu_;
  RtnlSocket sock_;
};

}  // namespace fdrill

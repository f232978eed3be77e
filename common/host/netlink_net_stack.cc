#include "common/host/netlink_net_stack.h"

#include <arpa/inet.h>
#include <linux/gen_stats.h>
#include <linux/if_addr.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <net/if.h>  // IFF_UP

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "common/host/host.h"
#include "common/host/netlink_neigh_codec.h"
#include "common/host/netlink_tc_codec.h"

namespace fdrill {

namespace {

// ip's names for IFLA_OPERSTATE (RFC 2863, linux/if.h IF_OPER_*).
std::string OperState(uint8_t state) {
  static const char* kNames[] = {"UNKNOWN", "NOTPRESENT", "DOWN", "LOWERLAYERDOWN",
                                 "TESTING", "DORMANT",    "UP"};
  return state < std::size(kNames) ? kNames[state] : "UNKNOWN";
}

}  // namespace

Result<std::vector<std::string>> NetlinkNetStack::DumpTc(uint16_t get, uint16_t reply, int ifindex,
                                                         uint32_t parent, const std::string& what) {
  NlMessage req(get, 0);
  tcmsg t = TcMessage(ifindex, 0, parent);
  req.Append(&t, sizeof(t));
  auto msgs = sock_.Dump(req, reply);
  if (!msgs.ok()) return msgs.status().Annotate("netlink: " + what);
  return msgs;
}

Result<std::vector<std::string>> NetlinkNetStack::DumpLinks() {
  NlMessage req(RTM_GETLINK, 0);
  ifinfomsg i{};
  i.ifi_family = AF_UNSPEC;
  req.Append(&i, sizeof(i));
  auto msgs = sock_.Dump(req, RTM_NEWLINK);
  if (!msgs.ok()) return msgs.status().Annotate("netlink: list links");
  return msgs;
}

Result<int> NetlinkNetStack::IfIndex(const std::string& ifname) {
  if (ifname.empty() || ifname.size() >= IF_NAMESIZE)
    return NotFound("no interface \"" + ifname + "\" here");
  NlMessage req(RTM_GETLINK, 0);
  ifinfomsg i{};
  i.ifi_family = AF_UNSPEC;
  req.Append(&i, sizeof(i));
  req.PutString(IFLA_IFNAME, ifname);
  auto msgs = sock_.Get(req, RTM_NEWLINK);
  if (!msgs.ok()) {
    if (msgs.status().code() == StatusCode::kNotFound)
      return NotFound("no interface \"" + ifname + "\" here");
    return msgs.status().Annotate("netlink: look up " + ifname);
  }
  ifinfomsg found{};
  std::string_view attrs;
  if (msgs->empty() || !SplitMessage(msgs->front(), &found, &attrs))
    return NotFound("no interface \"" + ifname + "\" here");
  return found.ifi_index;
}

Result<std::map<int, std::string>> NetlinkNetStack::IfNames() {
  auto msgs = DumpLinks();
  if (!msgs.ok()) return msgs.status();
  std::map<int, std::string> names;
  for (const auto& payload : *msgs) {
    ifinfomsg info{};
    std::string_view attrs;
    if (SplitMessage(payload, &info, &attrs))
      names[info.ifi_index] = ParseAttrs(attrs, IFLA_MAX)[IFLA_IFNAME].String();
  }
  return names;
}

Result<std::vector<LinkState>> NetlinkNetStack::Links() {
  std::lock_guard<std::mutex> lock(mu_);
  auto msgs = DumpLinks();
  if (!msgs.ok()) return msgs.status();
  std::map<int, std::string> names;
  std::vector<std::pair<LinkState, int>> links;  // with the master's index
  for (const auto& payload : *msgs) {
    ifinfomsg info{};
    std::string_view attrs;
    if (!SplitMessage(payload, &info, &attrs)) continue;
    auto a = ParseAttrs(attrs, IFLA_MAX);
    LinkState s;
    s.name = a[IFLA_IFNAME].String();
    s.admin_up = (info.ifi_flags & IFF_UP) != 0;
    s.operstate = a[IFLA_OPERSTATE].data.empty()
                      ? "UNKNOWN"
                      : OperState(static_cast<uint8_t>(a[IFLA_OPERSTATE].data[0]));
    names[info.ifi_index] = s.name;
    links.emplace_back(std::move(s),
                       a[IFLA_MASTER].data.empty() ? 0 : static_cast<int>(a[IFLA_MASTER].U32()));
  }
  std::vector<LinkState> out;
  for (auto& [link, master] : links) {
    if (master != 0 && names.count(master)) link.master = names[master];
    out.push_back(std::move(link));
  }
  return out;
}

Result<std::vector<Qdisc>> NetlinkNetStack::Qdiscs(const std::string& ifname) {
  std::lock_guard<std::mutex> lock(mu_);
  auto idx = IfIndex(ifname);
  if (!idx.ok()) return idx.status();
  auto msgs = DumpTc(RTM_GETQDISC, RTM_NEWQDISC, *idx, 0, "qdiscs of " + ifname);
  if (!msgs.ok()) return msgs.status();
  std::vector<Qdisc> out;
  for (const auto& payload : *msgs) {
    tcmsg q{};
    std::string_view attrs;
    if (!SplitMessage(payload, &q, &attrs) || q.tcm_ifindex != *idx) continue;
    auto a = ParseAttrs(attrs, TCA_MAX);
    Qdisc d;
    d.kind = a[TCA_KIND].String();
    d.handle = FormatTcHandle(q.tcm_handle);
    d.parent = q.tcm_parent == TC_H_ROOT ? "" : FormatTcHandle(q.tcm_parent);
    d.options = DecodeQdiscOptions(d.kind, a[TCA_OPTIONS].data);
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::vector<HtbClass>> NetlinkNetStack::HtbClasses(const std::string& ifname) {
  std::lock_guard<std::mutex> lock(mu_);
  auto idx = IfIndex(ifname);
  if (!idx.ok()) return idx.status();
  auto msgs = DumpTc(RTM_GETTCLASS, RTM_NEWTCLASS, *idx, 0, "classes of " + ifname);
  if (!msgs.ok()) return msgs.status();
  std::vector<HtbClass> out;
  for (const auto& payload : *msgs) {
    tcmsg c{};
    std::string_view attrs;
    if (!SplitMessage(payload, &c, &attrs)) continue;
    auto a = ParseAttrs(attrs, TCA_MAX);
    if (a[TCA_KIND].String() != "htb") continue;
    auto o = ParseAttrs(a[TCA_OPTIONS].data, TCA_HTB_MAX);
    tc_htb_opt opt{};
    if (!ReadStruct(o[TCA_HTB_PARMS].data, &opt)) continue;
    uint64_t bytes = opt.rate.rate;
    if (!o[TCA_HTB_RATE64].data.empty()) bytes = o[TCA_HTB_RATE64].U64();
    out.push_back({FormatTcHandle(c.tcm_handle), bytes * 8});
  }
  return out;
}

Result<std::vector<U32Filter>> NetlinkNetStack::U32Filters(const std::string& ifname) {
  // A filter dump lists one qdisc's filters (the root's when no parent is
  // given), so ask every classful qdisc of the interface.
  auto tree = Qdiscs(ifname);
  if (!tree.ok()) return tree.status();
  std::lock_guard<std::mutex> lock(mu_);
  auto idx = IfIndex(ifname);
  if (!idx.ok()) return idx.status();
  std::vector<U32Filter> out;
  for (const auto& q : *tree) {
    if (q.kind != "htb") continue;
    auto handle = ParseTcHandle(q.handle);
    if (!handle.ok()) continue;
    auto msgs = DumpTc(RTM_GETTFILTER, RTM_NEWTFILTER, *idx, *handle, "filters of " + ifname);
    if (!msgs.ok()) return msgs.status();
    for (const auto& payload : *msgs) {
      tcmsg f{};
      std::string_view attrs;
      if (!SplitMessage(payload, &f, &attrs)) continue;
      auto a = ParseAttrs(attrs, TCA_MAX);
      if (a[TCA_KIND].String() != "u32") continue;
      auto o = ParseAttrs(a[TCA_OPTIONS].data, TCA_U32_MAX);
      tc_u32_sel sel{};
      tc_u32_key key{};
      const std::string_view s = o[TCA_U32_SEL].data;
      if (!ReadStruct(s, &sel) || sel.nkeys == 0 || !ReadStruct(s.substr(sizeof(sel)), &key))
        continue;
      char value[9], mask[9];
      std::snprintf(value, sizeof(value), "%08x", ntohl(key.val));
      std::snprintf(mask, sizeof(mask), "%08x", ntohl(key.mask));
      out.push_back({FormatTcHandle(o[TCA_U32_CLASSID].U32()), value, mask, key.off});
    }
  }
  return out;
}

Result<std::vector<RootQdiscCounters>> NetlinkNetStack::RootCounters() {
  std::lock_guard<std::mutex> lock(mu_);
  auto names = IfNames();
  if (!names.ok()) return names.status();
  auto msgs = DumpTc(RTM_GETQDISC, RTM_NEWQDISC, 0, 0, "qdisc counters");
  if (!msgs.ok()) return msgs.status();
  std::vector<RootQdiscCounters> out;
  for (const auto& payload : *msgs) {
    tcmsg q{};
    std::string_view attrs;
    if (!SplitMessage(payload, &q, &attrs) || q.tcm_parent != TC_H_ROOT) continue;
    auto a = ParseAttrs(attrs, TCA_MAX);
    RootQdiscCounters c;
    c.dev = names->count(q.tcm_ifindex) ? names->at(q.tcm_ifindex) : "";
    auto stats = ParseAttrs(a[TCA_STATS2].data, TCA_STATS_MAX);
    gnet_stats_queue queue{};
    tc_stats legacy{};
    if (ReadStruct(stats[TCA_STATS_QUEUE].data, &queue)) {
      c.drops = queue.drops;
      c.overlimits = queue.overlimits;
    } else if (ReadStruct(a[TCA_STATS].data, &legacy)) {
      c.drops = legacy.drops;
      c.overlimits = legacy.overlimits;
    } else {
      continue;
    }
    if (!c.dev.empty()) out.push_back(std::move(c));
  }
  return out;
}

namespace {
Result<in_addr> Ipv4(const std::string& address) {
  in_addr a{};
  if (inet_pton(AF_INET, address.c_str(), &a) != 1)
    return InvalidArgument("\"" + address + "\" is not an IPv4 address");
  return a;
}
}  // namespace

Result<std::string> NetlinkNetStack::RouteDevice(const std::string& address) {
  auto dst = Ipv4(address);
  if (!dst.ok()) return dst.status();
  std::lock_guard<std::mutex> lock(mu_);
  NlMessage req(RTM_GETROUTE, 0);
  rtmsg r{};
  r.rtm_family = AF_INET;
  r.rtm_dst_len = 32;
  req.Append(&r, sizeof(r));
  req.Put(RTA_DST, &*dst, sizeof(*dst));
  auto msgs = sock_.Get(req, RTM_NEWROUTE);
  if (!msgs.ok()) return msgs.status().Annotate("netlink: route to " + address);
  for (const auto& payload : *msgs) {
    rtmsg route{};
    std::string_view attrs;
    if (!SplitMessage(payload, &route, &attrs)) continue;
    auto a = ParseAttrs(attrs, RTA_MAX);
    if (a[RTA_OIF].data.empty()) continue;
    auto names = IfNames();
    if (!names.ok()) return names.status();
    const int oif = static_cast<int>(a[RTA_OIF].U32());
    if (names->count(oif)) return names->at(oif);
  }
  return Unavailable("netlink: the route to " + address + " names no device");
}

Result<std::vector<std::string>> NetlinkNetStack::AddressDevices(const std::string& address) {
  auto want = Ipv4(address);
  if (!want.ok()) return want.status();
  std::lock_guard<std::mutex> lock(mu_);
  NlMessage req(RTM_GETADDR, 0);
  ifaddrmsg i{};
  i.ifa_family = AF_INET;
  req.Append(&i, sizeof(i));
  auto msgs = sock_.Dump(req, RTM_NEWADDR);
  if (!msgs.ok()) return msgs.status().Annotate("netlink: addresses");
  auto names = IfNames();
  if (!names.ok()) return names.status();
  std::vector<std::string> out;
  for (const auto& payload : *msgs) {
    ifaddrmsg info{};
    std::string_view attrs;
    if (!SplitMessage(payload, &info, &attrs)) continue;
    auto a = ParseAttrs(attrs, IFA_MAX);
    // IFA_LOCAL is the interface's own address (IFA_ADDRESS is the peer's
    // on a point-to-point link).
    const NlAttr& local = a[IFA_LOCAL].data.empty() ? a[IFA_ADDRESS] : a[IFA_LOCAL];
    in_addr have{};
    if (!ReadStruct(local.data, &have) || have.s_addr != want->s_addr) continue;
    if (names->count(static_cast<int>(info.ifa_index)))
      out.push_back(names->at(static_cast<int>(info.ifa_index)));
  }
  return out;
}

Result<std::vector<Neighbour>> NetlinkNetStack::Neighbours(const std::string& ifname) {
  std::lock_guard<std::mutex> lock(mu_);
  auto idx = IfIndex(ifname);
  if (!idx.ok()) return idx.status();
  NlMessage req = NeighDumpRequest(*idx);
  auto msgs = sock_.Dump(req, RTM_NEWNEIGH);
  if (!msgs.ok()) return msgs.status().Annotate("netlink: neighbours of " + ifname);
  std::vector<Neighbour> out;
  for (const auto& payload : *msgs) {
    if (auto n = DecodeNeighbour(payload, *idx)) out.push_back(std::move(*n));
  }
  return out;
}

Status NetlinkNetStack::Apply(const NetChange& change) {
  const std::string what = "`" + JoinArgv(change.Argv()) + "` over netlink";
  std::lock_guard<std::mutex> lock(mu_);
  auto idx = IfIndex(change.ifname);
  if (!idx.ok()) return idx.status().Annotate(what);
  auto msg = EncodeNetChange(change, *idx);
  if (!msg.ok()) return msg.status().Annotate(what);
  Status s = sock_.Request(*msg);
  return s.ok() ? s : s.Annotate(what);
}

}  // namespace fdrill

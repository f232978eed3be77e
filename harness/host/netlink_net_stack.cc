#include "harness/host/netlink_net_stack.h"

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

#include "harness/host/host.h"

namespace fdrill {

namespace {

__extension__ typedef unsigned __int128 U128;  // rate x time without overflow

constexpr uint16_t kCreateReplace = NLM_F_CREATE | NLM_F_REPLACE;
constexpr int kPschedShift = 6;  // psched ticks are 64 ns (PSCHED_SHIFT)

// ip's names for IFLA_OPERSTATE (RFC 2863, linux/if.h IF_OPER_*).
std::string OperState(uint8_t state) {
  static const char* kNames[] = {"UNKNOWN", "NOTPRESENT", "DOWN", "LOWERLAYERDOWN",
                                 "TESTING", "DORMANT",    "UP"};
  return state < std::size(kNames) ? kNames[state] : "UNKNOWN";
}

tcmsg TcMessage(int ifindex, uint32_t handle, uint32_t parent) {
  tcmsg t{};
  t.tcm_family = AF_UNSPEC;
  t.tcm_ifindex = ifindex;
  t.tcm_handle = handle;
  t.tcm_parent = parent;
  return t;
}

// A rate as the kernel takes it: bytes/s, 32-bit field saturated (the
// RATE64 attribute carries the rest), linklayer ethernet.
tc_ratespec RateSpec(uint64_t bytes_per_sec) {
  tc_ratespec r{};
  r.rate = bytes_per_sec >= (uint64_t{1} << 32) ? ~0u : static_cast<uint32_t>(bytes_per_sec);
  r.linklayer = TC_LINKLAYER_ETHERNET;
  return r;
}

// Time to send `bytes` at `bytes_per_sec`, in psched ticks (32-bit, saturated).
uint32_t XmitTicks(uint64_t bytes, uint64_t bytes_per_sec) {
  if (bytes_per_sec == 0) return ~0u;
  const U128 ns = static_cast<U128>(bytes) * 1000000000u / bytes_per_sec;
  const U128 ticks = ns >> kPschedShift;
  return ticks > ~0u ? ~0u : static_cast<uint32_t>(ticks);
}

uint32_t Ticks(Duration d) {
  const auto ns = static_cast<uint64_t>(std::max<int64_t>(0, d.count()));
  const uint64_t ticks = ns >> kPschedShift;
  return ticks > ~0u ? ~0u : static_cast<uint32_t>(ticks);
}

uint32_t Saturate32(uint64_t v) { return v > ~0u ? ~0u : static_cast<uint32_t>(v); }

Result<uint32_t> ParentOf(const NetChange& c) {
  if (c.parent.empty()) return static_cast<uint32_t>(TC_H_ROOT);
  return ParseTcHandle(c.parent);
}

void EncodeTbf(const NetChange& c, NlMessage& m) {
  const uint64_t bytes = c.rate_bits / 8;
  tc_tbf_qopt q{};
  q.rate = RateSpec(bytes);
  q.buffer = XmitTicks(c.burst, bytes);
  // tc's `latency L`: the queue holds what the rate sends in L, plus the burst.
  const long double seconds = std::chrono::duration<long double>(c.latency).count();
  q.limit = Saturate32(static_cast<uint64_t>(static_cast<long double>(bytes) * seconds) + c.burst);
  m.Begin(TCA_OPTIONS);
  m.Put(TCA_TBF_PARMS, &q, sizeof(q));
  if (bytes >= (uint64_t{1} << 32)) m.PutU64(TCA_TBF_RATE64, bytes);
  m.PutU32(TCA_TBF_BURST, Saturate32(c.burst));
  m.End();
}

void EncodeHtbRoot(NlMessage& m) {
  tc_htb_glob g{};
  g.version = 3;  // TC_HTB_PROTOVER
  g.rate2quantum = 10;
  g.defcls = 0;  // unclassified packets leave through the direct queue, unshaped
  m.Begin(TCA_OPTIONS);
  m.Put(TCA_HTB_INIT, &g, sizeof(g));
  m.End();
}

void EncodeNetem(const NetChange& c, NlMessage& m) {
  tc_netem_qopt q{};
  q.latency = Ticks(c.delay);
  q.jitter = Ticks(c.jitter);
  q.limit = 1000;  // tc's default
  // netem's options are a struct followed by attributes, not a plain nest.
  m.Begin(TCA_OPTIONS, /*nested_flag=*/false);
  m.Raw(&q, sizeof(q));
  const int64_t delay = c.delay.count(), jitter = c.jitter.count();
  m.Put(TCA_NETEM_LATENCY64, &delay, sizeof(delay));
  m.Put(TCA_NETEM_JITTER64, &jitter, sizeof(jitter));
  m.End();
}

void EncodeHtbClass(const NetChange& c, NlMessage& m) {
  const uint64_t bytes = c.rate_bits / 8;
  tc_htb_opt o{};
  o.rate = RateSpec(bytes);
  o.ceil = RateSpec(bytes);
  o.buffer = XmitTicks(c.burst, bytes);
  o.cbuffer = XmitTicks(c.burst, bytes);
  m.Begin(TCA_OPTIONS);
  m.Put(TCA_HTB_PARMS, &o, sizeof(o));
  if (bytes >= (uint64_t{1} << 32)) {
    m.PutU64(TCA_HTB_RATE64, bytes);
    m.PutU64(TCA_HTB_CEIL64, bytes);
  }
  m.End();
}

Status EncodeU32Dst(const NetChange& c, NlMessage& m) {
  unsigned a = 0, b = 0, d3 = 0, d4 = 0, len = 32;
  char slash = 0;
  const int n = std::sscanf(c.dst.c_str(), "%u.%u.%u.%u%c%u", &a, &b, &d3, &d4, &slash, &len);
  if ((n != 4 && n != 6) || a > 255 || b > 255 || d3 > 255 || d4 > 255 || len > 32)
    return InvalidArgument("u32 dst \"" + c.dst + "\" is not an IPv4 address or prefix");
  const uint32_t mask = len == 0 ? 0 : ~uint32_t{0} << (32 - len);
  const uint32_t addr = ((a << 24) | (b << 16) | (d3 << 8) | d4) & mask;
  auto flowid = ParseTcHandle(c.handle);
  if (!flowid.ok()) return flowid.status();
  tc_u32_sel sel{};
  sel.flags = TC_U32_TERMINAL;
  sel.nkeys = 1;
  tc_u32_key key{};
  key.mask = htonl(mask);
  key.val = htonl(addr);
  key.off = 16;                           // the IPv4 destination
  char bytes[sizeof(sel) + sizeof(key)];  // the selector, then its keys
  std::memcpy(bytes, &sel, sizeof(sel));
  std::memcpy(bytes + sizeof(sel), &key, sizeof(key));
  m.Begin(TCA_OPTIONS);
  m.PutU32(TCA_U32_CLASSID, *flowid);
  m.Put(TCA_U32_SEL, bytes, sizeof(bytes));
  m.End();
  return Status::Ok();
}

template <typename T>
bool Read(std::string_view data, T* out) {
  if (data.size() < sizeof(T)) return false;
  std::memcpy(out, data.data(), sizeof(T));
  return true;
}

// The fixed struct at the head of a dumped message and its attributes.
template <typename T>
bool Split(const std::string& payload, T* head, std::string_view* attrs) {
  if (!Read(payload, head)) return false;
  *attrs = std::string_view(payload).substr(NLMSG_ALIGN(sizeof(T)));
  return true;
}

}  // namespace

Result<NlMessage> EncodeNetChange(const NetChange& c, int ifindex) {
  using Op = NetChange::Op;
  if (c.op == Op::kLinkUp || c.op == Op::kLinkDown) {
    NlMessage m(RTM_NEWLINK, 0);
    ifinfomsg i{};
    i.ifi_family = AF_UNSPEC;
    i.ifi_index = ifindex;
    i.ifi_flags = c.op == Op::kLinkUp ? IFF_UP : 0;
    i.ifi_change = IFF_UP;
    m.Append(&i, sizeof(i));
    return m;
  }
  if (c.op == Op::kRootQdiscDelete) {
    NlMessage m(RTM_DELQDISC, 0);
    tcmsg t = TcMessage(ifindex, 0, TC_H_ROOT);
    m.Append(&t, sizeof(t));
    return m;
  }
  auto parent = c.op == Op::kQdiscReplace ? ParentOf(c) : ParseTcHandle(c.parent);
  if (!parent.ok()) return parent.status();
  if (c.op == Op::kU32DstFilterAdd) {
    NlMessage m(RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL);
    tcmsg t = TcMessage(ifindex, 0, *parent);
    t.tcm_info = TC_H_MAKE(1u << 16, htons(ETH_P_IP));  // prio 1, protocol ip
    m.Append(&t, sizeof(t));
    m.PutString(TCA_KIND, "u32");
    if (auto s = EncodeU32Dst(c, m); !s.ok()) return s;
    return m;
  }
  auto handle = ParseTcHandle(c.handle);
  if (!handle.ok()) return handle.status();
  const bool klass = c.op == Op::kHtbClassReplace;
  NlMessage m(klass ? RTM_NEWTCLASS : RTM_NEWQDISC, kCreateReplace);
  tcmsg t = TcMessage(ifindex, *handle, *parent);
  m.Append(&t, sizeof(t));
  m.PutString(TCA_KIND, c.kind);
  if (klass) {
    EncodeHtbClass(c, m);
  } else if (c.kind == "tbf") {
    EncodeTbf(c, m);
  } else if (c.kind == "htb") {
    EncodeHtbRoot(m);
  } else if (c.kind == "netem") {
    EncodeNetem(c, m);
  } else if (c.kind == "bfifo" || c.kind == "pfifo") {
    tc_fifo_qopt f{Saturate32(c.limit)};
    m.Put(TCA_OPTIONS, &f, sizeof(f));
  } else {
    return InvalidArgument("no netlink encoding for qdisc kind \"" + c.kind + "\"");
  }
  return m;
}

Json DecodeQdiscOptions(const std::string& kind, std::string_view options) {
  Json out = Json::object();
  if (kind == "tbf") {
    auto a = ParseAttrs(options, TCA_TBF_MAX);
    tc_tbf_qopt q{};
    if (!Read(a[TCA_TBF_PARMS].data, &q)) return out;
    uint64_t rate = q.rate.rate;
    if (!a[TCA_TBF_RATE64].data.empty()) rate = a[TCA_TBF_RATE64].U64();
    const U128 ns = static_cast<U128>(q.buffer) << kPschedShift;
    out["rate"] = rate;
    out["burst"] = static_cast<uint64_t>(ns * rate / 1000000000u);
    out["limit"] = q.limit;
  } else if (kind == "bfifo" || kind == "pfifo") {
    tc_fifo_qopt f{};
    if (Read(options, &f)) out["limit"] = f.limit;
  } else if (kind == "netem") {
    tc_netem_qopt q{};
    if (!Read(options, &q)) return out;
    auto a = ParseAttrs(options.substr(NLA_ALIGN(sizeof(q))), TCA_NETEM_MAX);
    int64_t delay = static_cast<int64_t>(q.latency) << kPschedShift;
    int64_t jitter = static_cast<int64_t>(q.jitter) << kPschedShift;
    if (!a[TCA_NETEM_LATENCY64].data.empty())
      delay = static_cast<int64_t>(a[TCA_NETEM_LATENCY64].U64());
    if (!a[TCA_NETEM_JITTER64].data.empty())
      jitter = static_cast<int64_t>(a[TCA_NETEM_JITTER64].U64());
    out["limit"] = q.limit;
    out["delay"] = {{"delay", static_cast<double>(delay) / 1e9},
                    {"jitter", static_cast<double>(jitter) / 1e9}};
  } else if (kind == "htb") {
    auto a = ParseAttrs(options, TCA_HTB_MAX);
    tc_htb_glob g{};
    if (Read(a[TCA_HTB_INIT].data, &g)) {
      out["r2q"] = g.rate2quantum;
      out["default"] = g.defcls;
    }
  }
  return out;
}

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
  if (msgs->empty() || !Split(msgs->front(), &found, &attrs))
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
    if (Split(payload, &info, &attrs))
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
    if (!Split(payload, &info, &attrs)) continue;
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
    if (!Split(payload, &q, &attrs) || q.tcm_ifindex != *idx) continue;
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
    if (!Split(payload, &c, &attrs)) continue;
    auto a = ParseAttrs(attrs, TCA_MAX);
    if (a[TCA_KIND].String() != "htb") continue;
    auto o = ParseAttrs(a[TCA_OPTIONS].data, TCA_HTB_MAX);
    tc_htb_opt opt{};
    if (!Read(o[TCA_HTB_PARMS].data, &opt)) continue;
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
      if (!Split(payload, &f, &attrs)) continue;
      auto a = ParseAttrs(attrs, TCA_MAX);
      if (a[TCA_KIND].String() != "u32") continue;
      auto o = ParseAttrs(a[TCA_OPTIONS].data, TCA_U32_MAX);
      tc_u32_sel sel{};
      tc_u32_key key{};
      const std::string_view s = o[TCA_U32_SEL].data;
      if (!Read(s, &sel) || sel.nkeys == 0 || !Read(s.substr(sizeof(sel)), &key)) continue;
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
    if (!Split(payload, &q, &attrs) || q.tcm_parent != TC_H_ROOT) continue;
    auto a = ParseAttrs(attrs, TCA_MAX);
    RootQdiscCounters c;
    c.dev = names->count(q.tcm_ifindex) ? names->at(q.tcm_ifindex) : "";
    auto stats = ParseAttrs(a[TCA_STATS2].data, TCA_STATS_MAX);
    gnet_stats_queue queue{};
    tc_stats legacy{};
    if (Read(stats[TCA_STATS_QUEUE].data, &queue)) {
      c.drops = queue.drops;
      c.overlimits = queue.overlimits;
    } else if (Read(a[TCA_STATS].data, &legacy)) {
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
    if (!Split(payload, &route, &attrs)) continue;
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
    if (!Split(payload, &info, &attrs)) continue;
    auto a = ParseAttrs(attrs, IFA_MAX);
    // IFA_LOCAL is the interface's own address (IFA_ADDRESS is the peer's
    // on a point-to-point link).
    const NlAttr& local = a[IFA_LOCAL].data.empty() ? a[IFA_ADDRESS] : a[IFA_LOCAL];
    in_addr have{};
    if (!Read(local.data, &have) || have.s_addr != want->s_addr) continue;
    if (names->count(static_cast<int>(info.ifa_index)))
      out.push_back(names->at(static_cast<int>(info.ifa_index)));
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

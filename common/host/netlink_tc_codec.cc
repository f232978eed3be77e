#include "common/host/netlink_tc_codec.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <net/if.h>  // IFF_UP

#include <cstdio>
#include <cstring>

#include "common/host/netlink_neigh_codec.h"

namespace fdrill {

tcmsg TcMessage(int ifindex, uint32_t handle, uint32_t parent) {
  tcmsg t{};
  t.tcm_family = AF_UNSPEC;
  t.tcm_ifindex = ifindex;
  t.tcm_handle = handle;
  t.tcm_parent = parent;
  return t;
}

namespace {

__extension__ typedef unsigned __int128 U128;  // rate x time without overflow

constexpr uint16_t kCreateReplace = NLM_F_CREATE | NLM_F_REPLACE;
constexpr int kPschedShift = 6;  // psched ticks are 64 ns (PSCHED_SHIFT)

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
  if (c.op == Op::kNeighReplace) return EncodeNeighReplace(c, ifindex);
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
    if (!ReadStruct(a[TCA_TBF_PARMS].data, &q)) return out;
    uint64_t rate = q.rate.rate;
    if (!a[TCA_TBF_RATE64].data.empty()) rate = a[TCA_TBF_RATE64].U64();
    const U128 ns = static_cast<U128>(q.buffer) << kPschedShift;
    out["rate"] = rate;
    out["burst"] = static_cast<uint64_t>(ns * rate / 1000000000u);
    out["limit"] = q.limit;
  } else if (kind == "bfifo" || kind == "pfifo") {
    tc_fifo_qopt f{};
    if (ReadStruct(options, &f)) out["limit"] = f.limit;
  } else if (kind == "netem") {
    tc_netem_qopt q{};
    if (!ReadStruct(options, &q)) return out;
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
    if (ReadStruct(a[TCA_HTB_INIT].data, &g)) {
      out["r2q"] = g.rate2quantum;
      out["default"] = g.defcls;
    }
  }
  return out;
}

}  // namespace fdrill

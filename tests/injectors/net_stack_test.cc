// NetChange's commands, tc handles, and the rtnetlink messages
// NetlinkNetStack sends, decoded field by field (no kernel needed; the
// kernel's side is tests/injectors/netlink_e2e_test.cc).
#include <arpa/inet.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <cstring>

#include <gtest/gtest.h>

#include "common/host/host.h"
#include "common/host/netlink_tc_codec.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;

TEST(TcHandle, FormatsAndParsesAsTcDoes) {
  EXPECT_EQ(FormatTcHandle(0xfd10000), "fd1:");
  EXPECT_EQ(FormatTcHandle(0x10001), "1:1");
  EXPECT_EQ(FormatTcHandle(0), "0:");
  EXPECT_EQ(*ParseTcHandle("fd1:"), 0xfd10000u);
  EXPECT_EQ(*ParseTcHandle("1:1"), 0x10001u);
  EXPECT_EQ(*ParseTcHandle("ffff:fff1"), 0xfffffff1u);
  for (const char* bad : {"", "root", "1", ":1", "g:", "12345:", "1:12345", "1: "})
    EXPECT_EQ(ParseTcHandle(bad).status().code(), StatusCode::kInvalidArgument) << bad;
}

TEST(NetChange, EachChangeIsTheTcOrIpCommandAnOperatorWouldType) {
  EXPECT_EQ(JoinArgv(NetChange::LinkUp("fab0", false).Argv()), "ip link set dev fab0 down");
  EXPECT_EQ(
      JoinArgv(NetChange::Tbf("fab0", "", "fd1:", 100'000'000, 131072, milliseconds(50)).Argv()),
      "tc qdisc replace dev fab0 root handle fd1: tbf rate 100000000bit burst 131072 "
      "latency 50ms");
  EXPECT_EQ(JoinArgv(NetChange::HtbRoot("fab0", "1:1", "fd1:").Argv()),
            "tc qdisc replace dev fab0 parent 1:1 handle fd1: htb default 0");
  EXPECT_EQ(JoinArgv(NetChange::HtbClassRate("fab0", "fd1:", "fd1:1", 1000, 1600).Argv()),
            "tc class replace dev fab0 parent fd1: classid fd1:1 htb rate 1000bit ceil 1000bit "
            "burst 1600 cburst 1600");
  EXPECT_EQ(JoinArgv(NetChange::U32Dst("fab0", "fd1:", "198.18.0.2", "fd1:1").Argv()),
            "tc filter add dev fab0 parent fd1: protocol ip prio 1 u32 match ip dst 198.18.0.2 "
            "flowid fd1:1");
  EXPECT_EQ(JoinArgv(NetChange::Fifo("fab0", "1:1", "10:", "bfifo", 100000).Argv()),
            "tc qdisc replace dev fab0 parent 1:1 handle 10: bfifo limit 100000");
  EXPECT_EQ(JoinArgv(NetChange::Netem("fab0", "fd2:", milliseconds(5), milliseconds(1)).Argv()),
            "tc qdisc replace dev fab0 root handle fd2: netem delay 5000us 1000us");
  EXPECT_EQ(JoinArgv(NetChange::DeleteRootQdisc("fab0").Argv()), "tc qdisc del dev fab0 root");
}

// The message's tcmsg and its attributes.
struct Decoded {
  nlmsghdr header{};
  tcmsg tc{};
  std::vector<NlAttr> attrs;
  std::string bytes;  // keeps attrs' views alive
};

Decoded Decode(NlMessage& m) {
  Decoded d;
  d.bytes.assign(m.bytes().data(), m.bytes().size());
  std::memcpy(&d.header, d.bytes.data(), sizeof(d.header));
  std::memcpy(&d.tc, d.bytes.data() + NLMSG_HDRLEN, sizeof(d.tc));
  EXPECT_EQ(d.header.nlmsg_len, d.bytes.size());
  d.attrs = ParseAttrs(std::string_view(d.bytes).substr(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(tcmsg))),
                       TCA_MAX);
  return d;
}

TEST(NetlinkEncoding, ATbfIsTheRequestTcSends) {
  auto m =
      EncodeNetChange(NetChange::Tbf("fab0", "", "fd1:", 100'000'000, 131072, milliseconds(50)), 7);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  Decoded d = Decode(*m);
  EXPECT_EQ(d.header.nlmsg_type, RTM_NEWQDISC);
  EXPECT_EQ(d.header.nlmsg_flags & (NLM_F_CREATE | NLM_F_REPLACE), NLM_F_CREATE | NLM_F_REPLACE);
  EXPECT_EQ(d.tc.tcm_ifindex, 7);
  EXPECT_EQ(d.tc.tcm_handle, 0xfd10000u);
  EXPECT_EQ(d.tc.tcm_parent, TC_H_ROOT);
  EXPECT_EQ(d.attrs[TCA_KIND].String(), "tbf");
  auto o = ParseAttrs(d.attrs[TCA_OPTIONS].data, TCA_TBF_MAX);
  tc_tbf_qopt q{};
  ASSERT_EQ(o[TCA_TBF_PARMS].data.size(), sizeof(q));
  std::memcpy(&q, o[TCA_TBF_PARMS].data.data(), sizeof(q));
  EXPECT_EQ(q.rate.rate, 12'500'000u);
  EXPECT_EQ(q.rate.linklayer, TC_LINKLAYER_ETHERNET);  // no rate table needed
  // 131072 B at 12.5 MB/s = 10.48576 ms = 163840 ticks of 64 ns.
  EXPECT_EQ(q.buffer, 163840u);
  // tc's latency: 50 ms of the rate, plus the burst.
  EXPECT_EQ(q.limit, 625'000u + 131072u);
  EXPECT_EQ(o[TCA_TBF_BURST].U32(), 131072u);
  EXPECT_TRUE(o[TCA_TBF_RATE64].data.empty());
  // And read back as the dump gives it.
  Json back = DecodeQdiscOptions("tbf", d.attrs[TCA_OPTIONS].data);
  EXPECT_EQ(back["rate"], 12'500'000);
  EXPECT_EQ(back["burst"], 131072);
}

TEST(NetlinkEncoding, ARateBeyond32BitsGoesAsRate64) {
  auto m = EncodeNetChange(
      NetChange::Tbf("fab0", "1:1", "fd1:", 400'000'000'000, 1 << 22, milliseconds(10)), 3);
  ASSERT_TRUE(m.ok());
  Decoded d = Decode(*m);
  EXPECT_EQ(d.tc.tcm_parent, 0x10001u);
  auto o = ParseAttrs(d.attrs[TCA_OPTIONS].data, TCA_TBF_MAX);
  EXPECT_EQ(o[TCA_TBF_RATE64].U64(), 50'000'000'000u);
  EXPECT_EQ(DecodeQdiscOptions("tbf", d.attrs[TCA_OPTIONS].data)["rate"], 50'000'000'000u);
}

TEST(NetlinkEncoding, AU32FilterMatchesTheDestinationAtOffset16) {
  auto m = EncodeNetChange(NetChange::U32Dst("fab0", "fd1:", "198.18.0.0/24", "fd1:1"), 2);
  ASSERT_TRUE(m.ok());
  Decoded d = Decode(*m);
  EXPECT_EQ(d.header.nlmsg_type, RTM_NEWTFILTER);
  EXPECT_EQ(d.tc.tcm_parent, 0xfd10000u);
  EXPECT_EQ(TC_H_MAJ(d.tc.tcm_info) >> 16, 1u);  // prio 1
  auto o = ParseAttrs(d.attrs[TCA_OPTIONS].data, TCA_U32_MAX);
  EXPECT_EQ(o[TCA_U32_CLASSID].U32(), 0xfd10001u);
  tc_u32_sel sel{};
  tc_u32_key key{};
  ASSERT_EQ(o[TCA_U32_SEL].data.size(), sizeof(sel) + sizeof(key));
  std::memcpy(&sel, o[TCA_U32_SEL].data.data(), sizeof(sel));
  std::memcpy(&key, o[TCA_U32_SEL].data.data() + sizeof(sel), sizeof(key));
  EXPECT_EQ(sel.nkeys, 1);
  EXPECT_EQ(sel.flags & TC_U32_TERMINAL, TC_U32_TERMINAL);
  EXPECT_EQ(ntohl(key.val), 0xc6120000u);
  EXPECT_EQ(ntohl(key.mask), 0xffffff00u);
  EXPECT_EQ(key.off, 16);
  for (const char* bad : {"198.18.0", "198.18.0.256", "198.18.0.0/33", "fab0"}) {
    EXPECT_EQ(EncodeNetChange(NetChange::U32Dst("fab0", "fd1:", bad, "fd1:1"), 2).status().code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(NetlinkEncoding, AFifoAndALinkAndADeleteAreTheirOwnMessages) {
  auto fifo = EncodeNetChange(NetChange::Fifo("fab0", "1:1", "10:", "bfifo", 100000), 4);
  ASSERT_TRUE(fifo.ok());
  Decoded f = Decode(*fifo);
  EXPECT_EQ(f.attrs[TCA_KIND].String(), "bfifo");
  EXPECT_EQ(DecodeQdiscOptions("bfifo", f.attrs[TCA_OPTIONS].data)["limit"], 100000);

  auto down = EncodeNetChange(NetChange::LinkUp("fab0", false), 4);
  ASSERT_TRUE(down.ok());
  ifinfomsg i{};
  std::memcpy(&i, down->bytes().data() + NLMSG_HDRLEN, sizeof(i));
  EXPECT_EQ(down->header()->nlmsg_type, RTM_NEWLINK);
  EXPECT_EQ(i.ifi_index, 4);
  EXPECT_EQ(i.ifi_change, static_cast<unsigned>(IFF_UP));
  EXPECT_EQ(i.ifi_flags, 0u);

  auto del = EncodeNetChange(NetChange::DeleteRootQdisc("fab0"), 4);
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(Decode(*del).header.nlmsg_type, RTM_DELQDISC);
  EXPECT_EQ(Decode(*del).tc.tcm_parent, TC_H_ROOT);

  NetChange odd = NetChange::Fifo("fab0", "", "fd1:", "sfq", 1);
  EXPECT_EQ(EncodeNetChange(odd, 4).status().code(), StatusCode::kInvalidArgument);
}

TEST(NetlinkEncoding, NetemCarriesItsTimesInNanoseconds) {
  auto m = EncodeNetChange(NetChange::Netem("fab0", "fd2:", milliseconds(5), milliseconds(1)), 2);
  ASSERT_TRUE(m.ok());
  Decoded d = Decode(*m);
  Json back = DecodeQdiscOptions("netem", d.attrs[TCA_OPTIONS].data);
  EXPECT_DOUBLE_EQ(back["delay"]["delay"].get<double>(), 0.005);
  EXPECT_DOUBLE_EQ(back["delay"]["jitter"].get<double>(), 0.001);
}

TEST(NetlinkAttrs, ATruncatedOrOversizedAttributeEndsTheParse) {
  // One good u32 attribute, then a header claiming more bytes than there are.
  const char bytes[] = {8, 0, 1, 0, 42, 0, 0, 0, 64, 0, 2, 0, 1};
  auto a = ParseAttrs(std::string_view(bytes, sizeof(bytes)), 3);
  EXPECT_EQ(a[1].U32(), 42u);
  EXPECT_TRUE(a[2].data.empty());
  EXPECT_TRUE(ParseAttrs(std::string_view(bytes, 3), 3)[1].data.empty());
}

}  // namespace
}  // namespace fdrill

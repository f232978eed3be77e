// An interface's neighbour entries as both NetStacks read and change them:
// iproute2's JSON on the recording fake, the rtnetlink dump decoded from
// bytes, and the RTM_NEWNEIGH a replace sends (no kernel needed; the
// kernel's side is tests/injectors/netlink_e2e_test.cc).
#include <arpa/inet.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include <cstring>

#include <gtest/gtest.h>

#include "common/host/iproute_net_stack.h"
#include "common/host/netlink_neigh_codec.h"
#include "common/host/netlink_tc_codec.h"
#include "tests/fakes/fake_net.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

Json IpEntry(const std::string& dst, const std::string& lladdr, const std::string& state) {
  Json e = {{"dst", dst}, {"state", Json::array({state})}};
  if (!lladdr.empty()) e["lladdr"] = lladdr;
  return e;
}

TEST(NeighReplace, IsTheIpCommandAnOperatorWouldType) {
  EXPECT_EQ(
      JoinArgv(NetChange::NeighReplace("fab0", "198.18.0.2", "02:fd:00:00:01:02", false).Argv()),
      "ip neigh replace 198.18.0.2 lladdr 02:fd:00:00:01:02 dev fab0 nud stale");
  EXPECT_EQ(JoinArgv(NetChange::NeighReplace("fab0", "fe80::1", "02:fd:00:00:01:03", true).Argv()),
            "ip neigh replace fe80::1 lladdr 02:fd:00:00:01:03 dev fab0 nud permanent");
}

TEST(IprouteNeighbours, ReadsEntriesWithAnLladdrAndSkipsTheRest) {
  FakeNetKernel k;
  k.ifaces["fab0"].neighbours =
      Json::array({IpEntry("198.18.0.2", "02:fd:00:00:01:02", "REACHABLE"),
                   IpEntry("198.18.0.3", "02:fd:00:00:01:03", "PERMANENT"),
                   IpEntry("fe80::2", "02:fd:00:00:01:02", "DELAY"),
                   IpEntry("198.18.0.4", "", "FAILED"), IpEntry("198.18.0.5", "", "INCOMPLETE"),
                   IpEntry("224.0.0.1", "01:00:5e:00:00:01", "NOARP")});
  IprouteNetStack net(&k);
  auto n = net.Neighbours("fab0");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  std::vector<Neighbour> want = {{"198.18.0.2", "02:fd:00:00:01:02", "REACHABLE"},
                                 {"198.18.0.3", "02:fd:00:00:01:03", "PERMANENT"},
                                 {"fe80::2", "02:fd:00:00:01:02", "DELAY"}};
  EXPECT_EQ(*n, want);
  EXPECT_EQ(k.calls.back(), (Argv{"ip", "-j", "neigh", "show", "dev", "fab0"}));
  EXPECT_TRUE(ErrorContains(net.Neighbours("fab7").status(), StatusCode::kNotFound, "fab7"));
}

// An RTM_NEWNEIGH payload as the kernel dumps it: ndmsg, NDA_DST, NDA_LLADDR.
std::string Dumped(int family, int ifindex, uint16_t state, const std::string& dst,
                   std::string_view lladdr) {
  NlMessage m(RTM_NEWNEIGH, 0);
  ndmsg n{};
  n.ndm_family = static_cast<uint8_t>(family);
  n.ndm_ifindex = ifindex;
  n.ndm_state = state;
  m.Append(&n, sizeof(n));
  unsigned char addr[16];
  EXPECT_EQ(inet_pton(family, dst.c_str(), addr), 1) << dst;
  m.Put(NDA_DST, addr, family == AF_INET ? 4 : 16);
  if (!lladdr.empty()) m.Put(NDA_LLADDR, lladdr.data(), lladdr.size());
  return std::string(m.bytes().data() + NLMSG_HDRLEN, m.bytes().size() - NLMSG_HDRLEN);
}

TEST(NetlinkNeighbours, ADumpDecodesAsIpPrintsIt) {
  const std::string_view mac("\x02\xfd\x00\x00\x01\x02", 6);
  auto reachable = DecodeNeighbour(Dumped(AF_INET, 4, NUD_REACHABLE, "198.18.0.2", mac), 4);
  ASSERT_TRUE(reachable.has_value());
  EXPECT_EQ(*reachable, (Neighbour{"198.18.0.2", "02:fd:00:00:01:02", "REACHABLE"}));
  auto permanent = DecodeNeighbour(Dumped(AF_INET6, 4, NUD_PERMANENT, "fe80::1", mac), 4);
  ASSERT_TRUE(permanent.has_value());
  EXPECT_EQ(*permanent, (Neighbour{"fe80::1", "02:fd:00:00:01:02", "PERMANENT"}));
  EXPECT_TRUE(permanent->permanent());
  // Another interface's, one without an lladdr, and states that hold none.
  EXPECT_FALSE(DecodeNeighbour(Dumped(AF_INET, 5, NUD_STALE, "198.18.0.2", mac), 4));
  EXPECT_FALSE(DecodeNeighbour(Dumped(AF_INET, 4, NUD_STALE, "198.18.0.2", ""), 4));
  for (uint16_t state : {NUD_FAILED, NUD_INCOMPLETE, NUD_NOARP, NUD_NONE})
    EXPECT_FALSE(DecodeNeighbour(Dumped(AF_INET, 4, state, "198.18.0.2", mac), 4)) << state;
}

TEST(NetlinkNeighbours, AReplaceIsTheRequestIpSends) {
  for (bool permanent : {false, true}) {
    auto m = EncodeNetChange(
        NetChange::NeighReplace("fab0", "198.18.0.2", "02:fd:00:00:01:02", permanent), 7);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(m->header()->nlmsg_type, RTM_NEWNEIGH);
    EXPECT_EQ(m->header()->nlmsg_flags & (NLM_F_CREATE | NLM_F_REPLACE),
              NLM_F_CREATE | NLM_F_REPLACE);
    const std::string payload(m->bytes().data() + NLMSG_HDRLEN, m->bytes().size() - NLMSG_HDRLEN);
    ndmsg n{};
    std::memcpy(&n, payload.data(), sizeof(n));
    EXPECT_EQ(n.ndm_family, AF_INET);
    EXPECT_EQ(n.ndm_ifindex, 7);
    EXPECT_EQ(n.ndm_state, permanent ? NUD_PERMANENT : NUD_STALE);
    // Read back as a dump would give it.
    auto back = DecodeNeighbour(payload, 7);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back,
              (Neighbour{"198.18.0.2", "02:fd:00:00:01:02", permanent ? "PERMANENT" : "STALE"}));
  }
  auto v6 =
      EncodeNetChange(NetChange::NeighReplace("fab0", "fe80::1", "02:fd:00:00:01:02", true), 7);
  ASSERT_TRUE(v6.ok());
  ndmsg n{};
  std::memcpy(&n, v6->bytes().data() + NLMSG_HDRLEN, sizeof(n));
  EXPECT_EQ(n.ndm_family, AF_INET6);
  for (const char* bad : {"fab0", "198.18.0.256", ""}) {
    EXPECT_EQ(EncodeNetChange(NetChange::NeighReplace("fab0", bad, "02:00:00:00:00:01", false), 7)
                  .status()
                  .code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
  for (const char* bad : {"", "02:00:00:00:00:0", "02:00:00:00:00:01:", "0x:00", "02-00"}) {
    EXPECT_EQ(EncodeNetChange(NetChange::NeighReplace("fab0", "198.18.0.2", bad, false), 7)
                  .status()
                  .code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
}

}  // namespace
}  // namespace fdrill

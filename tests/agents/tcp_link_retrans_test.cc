// TcpLinkRetrans: per link, the segments its sockets retransmitted, summed
// by socket cookie so that a socket closing is not a fall; RealTcpSockets
// against the kernel on loopback.
#include "agents/tcp_link_retrans.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/fakes/fake_tcp_sockets.h"

namespace fdrill {
namespace {

FakeTcpSockets Node() {
  FakeTcpSockets s;
  s.addresses = {{"lo", "127.0.0.1"},
                 {"mgmt0", "198.19.0.2"},
                 {"fab0", "198.18.0.2"},
                 {"fab1", "198.18.1.2"},
                 {"fab0", "fe80::1"}};
  return s;
}

Json SampleOf(TcpLinkRetrans& links) {
  Json out = Json::object();
  links.Sample("mgmt0", out);
  return out;
}

TEST(TcpLinkRetrans, EveryFabricLinkFromZeroNeverLoOrManagement) {
  FakeTcpSockets s = Node();
  s.sockets = {{.cookie = 1, .local = "198.19.0.2", .remote = "198.19.0.254", .total_retrans = 9},
               {.cookie = 2, .local = "127.0.0.1", .remote = "127.0.0.1", .total_retrans = 4}};
  TcpLinkRetrans links(s);
  EXPECT_EQ(SampleOf(links), (Json{{"fab0.tcp_retrans_segs", 0}, {"fab1.tcp_retrans_segs", 0}}));
}

TEST(TcpLinkRetrans, RisesBySocketAndIsNotLoweredByAClose) {
  FakeTcpSockets s = Node();
  s.sockets = {{.cookie = 1, .local = "198.18.0.2", .remote = "198.18.0.3", .total_retrans = 5},
               {.cookie = 2, .local = "198.18.0.2", .remote = "198.18.0.4", .total_retrans = 2},
               {.cookie = 3, .local = "198.18.1.2", .remote = "198.18.1.3", .total_retrans = 1}};
  TcpLinkRetrans links(s);
  Json first = SampleOf(links);
  EXPECT_EQ(first["fab0.tcp_retrans_segs"], 7);
  EXPECT_EQ(first["fab1.tcp_retrans_segs"], 1);

  // Socket 1 retransmits 10 more and closes before the next sample would
  // see it again; socket 2 rises by 3; a new socket 4 brings its own 6.
  s.sockets = {{.cookie = 1, .local = "198.18.0.2", .remote = "198.18.0.3", .total_retrans = 15}};
  EXPECT_EQ(SampleOf(links)["fab0.tcp_retrans_segs"], 17);
  s.sockets = {{.cookie = 2, .local = "198.18.0.2", .remote = "198.18.0.4", .total_retrans = 5},
               {.cookie = 4, .local = "198.18.0.2", .remote = "198.18.0.5", .total_retrans = 6}};
  Json third = SampleOf(links);
  // Socket 2 was not seen in the second sample: its 5 count again from 0.
  // (A socket missing from one dump is rare; counting it again overstates,
  // never understates, and never falls.)
  EXPECT_EQ(third["fab0.tcp_retrans_segs"], 28);
  EXPECT_EQ(third["fab1.tcp_retrans_segs"], 1);  // socket 3 closed: stays
}

TEST(TcpLinkRetrans, ACookieWhoseCountFellIsANewSocket) {
  FakeTcpSockets s = Node();
  s.sockets = {{.cookie = 7, .local = "198.18.0.2", .remote = "198.18.0.3", .total_retrans = 50}};
  TcpLinkRetrans links(s);
  EXPECT_EQ(SampleOf(links)["fab0.tcp_retrans_segs"], 50);
  s.sockets[0].total_retrans = 4;
  EXPECT_EQ(SampleOf(links)["fab0.tcp_retrans_segs"], 54);
}

TEST(TcpLinkRetrans, IPv6SocketsCountOnTheirInterface) {
  FakeTcpSockets s = Node();
  s.sockets = {{.cookie = 1, .local = "fe80::1", .remote = "fe80::2", .total_retrans = 3}};
  TcpLinkRetrans links(s);
  EXPECT_EQ(SampleOf(links)["fab0.tcp_retrans_segs"], 3);
}

TEST(TcpLinkRetrans, NoSockDiagAddsNothing) {
  FakeTcpSockets s = Node();
  s.fail = true;
  TcpLinkRetrans links(s);
  Json out = {{"fab0.tx_bytes", 1}};
  links.Sample("mgmt0", out);
  EXPECT_EQ(out, (Json{{"fab0.tx_bytes", 1}}));
}

// The kernel's TCP table is walked only when the namespace's RetransSegs or
// PassiveOpens moved since the last list: otherwise no socket's count rose.
TEST(TcpLinkRetrans, ListsTheSocketsOnlyWhenTheNamespaceActivityMoved) {
  FakeTcpSockets s = Node();
  s.activity = TcpActivity{.retrans_segs = 40, .passive_opens = 3};
  s.sockets = {{.cookie = 1, .local = "198.18.0.2", .remote = "198.18.0.3", .total_retrans = 5}};
  TcpLinkRetrans links(s);
  EXPECT_EQ(SampleOf(links)["fab0.tcp_retrans_segs"], 5);
  EXPECT_EQ(s.lists, 1);
  // Nothing moved: the same totals, no list.
  Json quiet = SampleOf(links);
  EXPECT_EQ(s.lists, 1) << "a quiet namespace's sockets were listed again";
  EXPECT_EQ(quiet, (Json{{"fab0.tcp_retrans_segs", 5}, {"fab1.tcp_retrans_segs", 0}}));

  // Socket 1 retransmits 2 more: RetransSegs rises with it.
  s.sockets[0].total_retrans = 7;
  s.activity->retrans_segs = 42;
  EXPECT_EQ(SampleOf(links)["fab0.tcp_retrans_segs"], 7);
  EXPECT_EQ(s.lists, 2);

  // An accepted socket brings its SYN-ACK's 1 retransmission, counted in
  // RetransSegs before the last list: PassiveOpens says it is there.
  s.sockets.push_back(
      {.cookie = 2, .local = "198.18.1.2", .remote = "198.18.1.3", .total_retrans = 1});
  s.activity->passive_opens = 4;
  EXPECT_EQ(SampleOf(links)["fab1.tcp_retrans_segs"], 1);
  EXPECT_EQ(s.lists, 3);
  SampleOf(links);
  EXPECT_EQ(s.lists, 3);
}

// An address added while nothing moved still gets its link's series.
TEST(TcpLinkRetrans, ANewAddressGetsItsSeriesWithoutAList) {
  FakeTcpSockets s = Node();
  s.activity = TcpActivity{};
  TcpLinkRetrans links(s);
  SampleOf(links);
  s.addresses.push_back({"fab2", "198.18.2.2"});
  EXPECT_EQ(SampleOf(links)["fab2.tcp_retrans_segs"], 0);
  EXPECT_EQ(s.lists, 1);
}

// Without the namespace's counters every sample lists, as before: nothing
// tells a quiet namespace.
TEST(TcpLinkRetrans, WithoutActivityEverySampleLists) {
  FakeTcpSockets s = Node();
  TcpLinkRetrans links(s);
  SampleOf(links);
  SampleOf(links);
  EXPECT_EQ(s.lists, 2);
  s.activity = TcpActivity{};
  SampleOf(links);
  SampleOf(links);
  EXPECT_EQ(s.lists, 3);
}

TEST(TcpActivity, ParsesTheTcpLinesOfProcNetSnmp) {
  constexpr char kSnmp[] =
      "Ip: Forwarding DefaultTTL InReceives\n"
      "Ip: 1 64 123\n"
      "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets "
      "CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
      "Tcp: 1 200 120000 -1 532 17 3 9 4 9041 8823 61 0 44 0\n"
      "Udp: InDatagrams NoPorts\n"
      "Udp: 5 6\n";
  auto a = ParseTcpActivity(kSnmp);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->retrans_segs, 61u);
  EXPECT_EQ(a->passive_opens, 17u);
  EXPECT_FALSE(ParseTcpActivity("Ip: Forwarding\nIp: 1\n").ok());
  EXPECT_FALSE(ParseTcpActivity("Tcp: RetransSegs PassiveOpens\nTcp: 1 x\n").ok());
}

// The kernel's own answer: a loopback connection made here is listed, both
// ends, with a cookie, and lo has 127.0.0.1.
TEST(RealTcpSockets, ListsALoopbackConnectionBothEnds) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const int server = accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);

  RealTcpSockets real;
  auto activity = real.Activity();
  ASSERT_TRUE(activity.ok()) << activity.status().ToString();
  EXPECT_GE(activity->passive_opens, 1u);  // ours, at least
  auto sockets = real.List();
  ASSERT_TRUE(sockets.ok()) << sockets.status().ToString();
  int ends = 0;
  for (const TcpSocket& s : *sockets) {
    if (s.local == "127.0.0.1" && s.remote == "127.0.0.1") {
      ++ends;
      EXPECT_NE(s.cookie, 0u);
      EXPECT_EQ(s.total_retrans, 0u);
    }
  }
  EXPECT_GE(ends, 2);  // the two ends of ours (other tests may hold more)
  auto addresses = real.Addresses();
  ASSERT_TRUE(addresses.ok()) << addresses.status().ToString();
  bool lo = false;
  for (const InterfaceAddress& a : *addresses)
    lo = lo || (a.interface == "lo" && a.address == "127.0.0.1");
  EXPECT_TRUE(lo);
  close(server);
  close(client);
  close(listener);
}

}  // namespace
}  // namespace fdrill

// The counters sample: /proc/net/dev when it can be read (no `ip` process
// every second), `ip -s -j link` otherwise; qdisc counters from `tc`.
#include "agents/counters.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

// As Linux 6.x prints it (net/core/net-procfs.c).
constexpr char kProcNetDev[] =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop "
    "fifo colls carrier "
    "compressed\n"
    "    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0  "
    "  0     0       0"
    "          0\n"
    " mgmt0:    5000      50    0    0    0     0          0         0     6000      60    0    0  "
    "  0     0       0"
    "          0\n"
    "  fab0: 123456789012    4321    2    7    0     0          0         0 987654321    1234    1 "
    "   3    0     0"
    "       0          0\n";

TEST(CountersTest, ReadsProcNetDevWithoutStartingIp) {
  FakeProcessRunner runner;
  runner.OnOutput(
      {"tc", "-s", "-j", "qdisc", "show"},
      R"([{"kind":"tbf","handle":"fd1:","root":true,"dev":"fab0","drops":5,"overlimits":9}])");
  FakeSysFs sysfs;
  sysfs.files["/proc/net/dev"] = kProcNetDev;
  auto c = SampleCounters(runner, &sysfs, "mgmt0");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)["fab0.rx_bytes"], 123456789012u);
  EXPECT_EQ((*c)["fab0.rx_packets"], 4321);
  EXPECT_EQ((*c)["fab0.rx_errors"], 2);
  EXPECT_EQ((*c)["fab0.rx_dropped"], 7);
  EXPECT_EQ((*c)["fab0.tx_bytes"], 987654321);
  EXPECT_EQ((*c)["fab0.tx_packets"], 1234);
  EXPECT_EQ((*c)["fab0.tx_errors"], 1);
  EXPECT_EQ((*c)["fab0.tx_dropped"], 3);
  EXPECT_EQ((*c)["fab0.qdisc_drops"], 5);
  EXPECT_FALSE(c->contains("lo.rx_bytes"));
  EXPECT_FALSE(c->contains("mgmt0.rx_bytes"));
  EXPECT_TRUE(runner.CallsStartingWith({"ip"}).empty());
}

// As Linux 6.1 prints them (net/ipv4/proc.c), shortened to the fields read
// and a neighbour on each side.
constexpr char kProcNetSnmp[] =
    "Udp: InDatagrams NoPorts\n"
    "Udp: 5 6\n"
    "Tcp: OutSegs RetransSegs InErrs OutRsts\n"
    "Tcp: 1482291 324 2 131309\n";
constexpr char kProcNetNetstat[] =
    "TcpExt: SyncookiesSent TCPTimeouts TCPLostRetransmit TCPSpuriousRTOs\n"
    "TcpExt: 0 79 3 1\n"
    "IpExt: InNoRoutes\n"
    "IpExt: 0\n";

TEST(CountersTest, AddsCarrierChangesAndTheTransportsLossCounters) {
  FakeProcessRunner runner;
  runner.OnOutput({"tc"}, "[]");
  FakeSysFs sysfs;
  sysfs.files["/proc/net/dev"] = kProcNetDev;
  sysfs.files["/sys/class/net/fab0/carrier_changes"] = "7\n";
  sysfs.files["/proc/net/snmp"] = kProcNetSnmp;
  sysfs.files["/proc/net/netstat"] = kProcNetNetstat;
  auto c = SampleCounters(runner, &sysfs, "mgmt0");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)["fab0.carrier_changes"], 7);
  EXPECT_EQ((*c)["tcp.retrans_segs"], 324);
  EXPECT_EQ((*c)["tcp.in_errs"], 2);
  EXPECT_EQ((*c)["tcp.timeouts"], 79);
  EXPECT_EQ((*c)["tcp.lost_retransmits"], 3);
  EXPECT_FALSE(c->contains("mgmt0.carrier_changes"));
  EXPECT_FALSE(c->contains("tcp.out_segs"));
}

TEST(CountersTest, ProcNetStatsWithMismatchedLinesAddsNothingWrong) {
  Json out = Json::object();
  ParseProcNetStats("Tcp: RetransSegs\nUdp: 5\n", out);
  EXPECT_TRUE(out.empty()) << out.dump();
  ParseProcNetStats("Tcp: RetransSegs InErrs\nTcp: 9 -1\n", out);
  EXPECT_EQ(out.dump(), R"({"tcp.retrans_segs":9})");
}

TEST(CountersTest, FallsBackToIpWhenProcNetDevIsUnreadableOrOdd) {
  for (const char* text : {"", "garbage\n"}) {
    FakeProcessRunner runner;
    runner.OnOutput(
        {"ip", "-s", "-j", "link", "show"},
        R"([{"ifname":"fab0","stats64":{"rx":{"bytes":11,"packets":1,"errors":0,"dropped":0},
                        "tx":{"bytes":22,"packets":2,"errors":0,"dropped":0}}}])");
    runner.OnOutput({"tc"}, "[]");
    FakeSysFs sysfs;
    if (*text) sysfs.files["/proc/net/dev"] = text;
    auto c = SampleCounters(runner, &sysfs, "mgmt0");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ((*c)["fab0.rx_bytes"], 11);
    EXPECT_EQ((*c)["fab0.tx_bytes"], 22);
    EXPECT_EQ(runner.CallsStartingWith({"ip"}).size(), 1u);
  }
}

}  // namespace
}  // namespace fdrill

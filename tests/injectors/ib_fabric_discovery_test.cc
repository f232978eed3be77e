// ib_fabric_discovery: ibnetdiscover's ports report, smpquery's PortInfo and
// sysfs GIDs as infiniband-diags 44.0 printed them under ibsim
// (tests/injectors/testdata/README.md), and FakeIbSwitchFabric held to the
// same captures.
#include "injectors/ib_fabric_discovery.h"

#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/fakes/fake_ib_switch.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

std::vector<IbPortsReportLine> ReportOf(const std::string& text) {
  auto report = ParseIbPortsReport(text);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return report.ok() ? *report : std::vector<IbPortsReportLine>{};
}

std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(IbPortsReport, ReadsTheCapturedTwoLeafFabric) {
  const auto report = ReportOf(IbTestdata("ibnetdiscover-44.0-ports-2leaf.txt"));
  ASSERT_EQ(report.size(), 84u);  // 2 x 40 switch ports, 4 CA ports
  const IbPortsReportLine* ca = FindIbPortByGuid(report, 0xb8cef60300000201);
  ASSERT_NE(ca, nullptr);
  EXPECT_EQ(ca->port.type, "CA");
  EXPECT_EQ(ca->port.lid, 4);
  EXPECT_EQ(ca->port.port, 1);
  EXPECT_EQ(ca->port.description, "gpu002 mlx5_0");
  EXPECT_EQ(ca->width, "4x");
  EXPECT_EQ(ca->speed, "HDR");
  ASSERT_TRUE(ca->peer.has_value());
  EXPECT_EQ(ca->peer->type, "SW");
  EXPECT_EQ(ca->peer->lid, 2);
  EXPECT_EQ(ca->peer->port, 19);
  EXPECT_EQ(ca->peer->guid, 0xb8cef60300a1b3c0u);
  EXPECT_EQ(ca->peer->description, "MF0;leaf02:MQM9700/U1");

  const IbPortsReportLine* sw = FindIbSwitchPort(report, 2, 19);
  ASSERT_NE(sw, nullptr);
  ASSERT_TRUE(sw->peer.has_value());
  EXPECT_EQ(sw->peer->Name(), "gpu002 mlx5_0/1");
  const IbPortsReportLine* empty = FindIbSwitchPort(report, 1, 36);
  ASSERT_NE(empty, nullptr);
  EXPECT_FALSE(empty->peer.has_value());
  EXPECT_EQ(empty->port.description, "MF0;leaf01:MQM9700/U1");
  EXPECT_EQ(empty->speed, "SDR");
  const IbPortsReportLine* isl = FindIbSwitchPort(report, 1, 39);
  ASSERT_TRUE(isl && isl->peer);
  EXPECT_EQ(isl->peer->type, "SW");

  auto dual = FindIbCaPorts(report, "gpu003 mlx5_0");
  ASSERT_EQ(dual.size(), 2u);
  EXPECT_EQ(dual[0]->port.port, 1);
  EXPECT_EQ(dual[1]->peer->Name(), "MF0;leaf02:MQM9700/U1/3");
  EXPECT_EQ(IbCaDescriptions(report),
            (std::set<std::string>{"gpu001 mlx5_0", "gpu002 mlx5_0", "gpu003 mlx5_0"}));
  // Every switch port shows the switch's GUID: it names no single port.
  EXPECT_EQ(FindIbPortByGuid(report, 0xb8cef60300a1b3c0), nullptr);
}

TEST(IbPortsReport, ReadsAnotherCapture) {
  // One 36-port switch, EDR: /tmp/research/ibsim/out_ibnetdiscover.txt (README).
  const auto report = ReportOf(IbTestdata("ibnetdiscover-44.0-ports-1switch.txt"));
  ASSERT_EQ(report.size(), 40u);
  const IbPortsReportLine* ca = FindIbPortByGuid(report, 0x0002c90300a0b3c2);
  ASSERT_TRUE(ca && ca->peer);
  EXPECT_EQ(ca->port.Name(), "node3 mlx5_0/2");
  EXPECT_EQ(ca->speed, "EDR");
  EXPECT_EQ(ca->peer->description, "MF0;sw01:MSB7800/U1");
  EXPECT_EQ(ca->peer->port, 4);
}

TEST(IbPortsReport, AnHcaBehindADisabledSwitchPortIsNotDiscovered) {
  const auto report = ReportOf(IbTestdata("ibnetdiscover-44.0-ports-2leaf-sw2p19-disabled.txt"));
  EXPECT_TRUE(FindIbCaPorts(report, "gpu002 mlx5_0").empty());
  const IbPortsReportLine* sw = FindIbSwitchPort(report, 2, 19);
  ASSERT_NE(sw, nullptr);
  EXPECT_FALSE(sw->peer.has_value());

  const auto cut = ReportOf(IbTestdata("ibnetdiscover-44.0-ports-cut-off.stdout"));
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].port.Name(), "gpu001 mlx5_0/1");
  EXPECT_FALSE(cut[0].peer.has_value());
}

TEST(IbPortsReport, DescriptionsKeepSpacesAndQuotesAndBadLinesAreErrors) {
  const auto report = ReportOf(
      "CA     7  1 0x0000000000000071 4x NDR - SW     2  5 0x00000000000000a0 "
      "( 'o'hara MT4129 ConnectX7   Mellanox Technologies' - 'leaf - a' )\n");
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].port.description, "o'hara MT4129 ConnectX7   Mellanox Technologies");
  EXPECT_EQ(report[0].peer->description, "leaf - a");
  for (const char* bad :
       {"CA     7  1 0xzz 4x NDR - SW     2  5 0x00000000000000a0 ( 'a' - 'b' )\n",
        "CA     7  1 0x0000000000000071 4x NDR - SW     2  5 0x00000000000000a0 ( 'a' - 'b'\n",
        "XX     7  1 0x0000000000000071 4x NDR                                    'a'\n",
        "CA     7  1 0x0000000000000071 4x NDR                                    a\n"}) {
    auto r = ParseIbPortsReport(bad);
    EXPECT_TRUE(ErrorContains(r.status(), StatusCode::kInternal, "ports report line")) << bad;
  }
}

TEST(IbPortsReport, FakeFabricPrintsWhatIbnetdiscoverPrinted) {
  FakeIbSwitchFabric fabric;
  EXPECT_EQ(SortedLines(fabric.PortsReport()),
            SortedLines(IbTestdata("ibnetdiscover-44.0-ports-2leaf.txt")));
  fabric.state(2, 19).phys = "Disabled";
  EXPECT_EQ(SortedLines(fabric.PortsReport()),
            SortedLines(IbTestdata("ibnetdiscover-44.0-ports-2leaf-sw2p19-disabled.txt")));
  // Disabling the port this node hangs off, as ibsim did: the reply is lost,
  // the port stays disabled, and nothing but the local port is left.
  auto r = fabric.Run({"ibportstate", "-C", "mlx5_0", "-P", "1", "1", "1", "disable"}, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 255);
  EXPECT_EQ(r->out, IbTestdata("ibportstate-44.0-disable-own-peer.stdout"));
  EXPECT_EQ(fabric.PortsReport(), IbTestdata("ibnetdiscover-44.0-ports-cut-off.stdout"));
  auto again = fabric.Run({"ibportstate", "-C", "mlx5_0", "-P", "1", "1", "1", "enable"}, {});
  EXPECT_EQ(again->out, IbTestdata("ibportstate-44.0-enable-after-cut.stdout"));
}

TEST(SmpPortInfo, ReadsTheStateLines) {
  auto active = ParseSmpPortInfo(IbTestdata("smpquery-44.0-portinfo-active.txt"));
  ASSERT_TRUE(active.ok()) << active.status().ToString();
  EXPECT_EQ(active->link_state, "Active");
  EXPECT_EQ(active->phys_state, "LinkUp");
  // ibsim leaves LinkState Active on a disabled port; PhysLinkState says it.
  auto disabled = ParseSmpPortInfo(IbTestdata("smpquery-44.0-portinfo-disabled.txt"));
  ASSERT_TRUE(disabled.ok());
  EXPECT_EQ(disabled->phys_state, "Disabled");
  auto polling = ParseSmpPortInfo(IbTestdata("smpquery-44.0-portinfo-polling.txt"));
  ASSERT_TRUE(polling.ok());
  EXPECT_EQ(polling->phys_state, "Polling");
  // ibportstate's set output: the first block (before the set) counts.
  auto set = ParseSmpPortInfo(IbTestdata("ibportstate-44.0-switch-disable.txt"));
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->phys_state, "LinkUp");
  EXPECT_TRUE(ErrorContains(
      ParseSmpPortInfo(IbTestdata("smpquery-44.0-portinfo-lid99.stdout")).status(), "no PortInfo"));
}

TEST(IbGuids, ParseFormatAndTheGidsPortGuid) {
  EXPECT_EQ(FormatIbGuid(0x2c90200402bd8), "0x0002c90200402bd8");
  for (const char* text : {"0x0002c90300a0b1c1", "0002c90300a0b1c1", "0002:c903:00a0:b1c1"}) {
    auto g = ParseIbGuid(text);
    ASSERT_TRUE(g.ok()) << text;
    EXPECT_EQ(*g, 0x0002c90300a0b1c1u);
  }
  for (const char* bad : {"", "0x", "0x12345678901234567", "gpu002", "0002:c903"})
    EXPECT_FALSE(ParseIbGuid(bad).ok()) << bad;
  // The kernel's format; umad2sim's sysfs leaves the subnet prefix 0.
  auto real = IbGidPortGuid("fe80:0000:0000:0000:b8ce:f603:0000:0101\n");
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(*real, 0xb8cef60300000101u);
  auto sim = IbGidPortGuid("0000:0000:0000:0000:0002:c903:00a0:b1c1\n");
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(*sim, 0x0002c90300a0b1c1u);
  EXPECT_FALSE(IbGidPortGuid("fe80::b8ce:f603:0:101").ok());
}

// FindSwitchPortFacing on reports no fabric fake plays.
TEST(SwitchPortFacing, SameNamedHcasAndBackToBackLinksAreRefused) {
  const std::string two_named =
      "CA     3  1 0x0000000000000011 4x HDR - SW     1  1 0x00000000000000a0 ( 'me mlx5_0' - 's' "
      ")\n"
      "CA     4  1 0x0000000000000021 4x HDR - SW     1  2 0x00000000000000a0 "
      "( 'MT4129 ConnectX7   Mellanox Technologies' - 's' )\n"
      "CA     5  1 0x0000000000000031 4x HDR - SW     1  3 0x00000000000000a0 "
      "( 'MT4129 ConnectX7   Mellanox Technologies' - 's' )\n";
  IbLinkSelector sel;
  sel.hca = "MT4129 ConnectX7   Mellanox Technologies";
  auto dup = FindSwitchPortFacing(sel, ReportOf(two_named), "mlx5_0/1", 0x11);
  EXPECT_TRUE(ErrorContains(dup.status(), "give params.guid"));
  EXPECT_TRUE(ErrorContains(dup.status(), "0x0000000000000031"));
  sel = IbLinkSelector{};
  sel.guid = 0x31;
  auto by_guid = FindSwitchPortFacing(sel, ReportOf(two_named), "mlx5_0/1", 0x11);
  ASSERT_TRUE(by_guid.ok()) << by_guid.status().ToString();
  EXPECT_EQ(by_guid->Name(), "switch 0x00000000000000a0 lid 1 port 3");

  const std::string back_to_back =
      "CA     3  1 0x0000000000000011 4x HDR - SW     1  1 0x00000000000000a0 ( 'me mlx5_0' - 's' "
      ")\n"
      "CA     4  1 0x0000000000000021 4x HDR - CA     5  1 0x0000000000000031 ( 'a' - 'b' )\n";
  sel = IbLinkSelector{};
  sel.hca = "a";
  EXPECT_TRUE(
      ErrorContains(FindSwitchPortFacing(sel, ReportOf(back_to_back), "mlx5_0/1", 0x11).status(),
                    "not to a switch port"));
  // The local port must be in the report at all.
  EXPECT_TRUE(
      ErrorContains(FindSwitchPortFacing(sel, ReportOf(back_to_back), "mlx5_0/1", 0x99).status(),
                    "does not list that port itself"));
}

}  // namespace
}  // namespace fdrill

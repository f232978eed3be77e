// The fabric map and the link x time heat map of report.html.
#include "reports/fabric_map.h"

#include <fstream>

#include <gtest/gtest.h>

#include "reports/analysis.h"
#include "reports/run_dir.h"
#include "tests/reports/mini_xml.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::ParseXml;
using reports_test::SyntheticRun;
using reports_test::TempDir;

// Standard run (slow-link on n2, 15..20 s) whose counters show n2 fab0's
// shaper holding packets back while n2's traffic falls to a tenth.
RunData RunWithCounters() {
  SyntheticRun run = SyntheticRun::SlowN2(20.0);
  for (int t = 0; t <= 40; ++t) {
    for (int n = 0; n < 4; ++n) {
      const bool slow = t > 15 && t <= 20;
      double sent = 1e9 * std::min(t, 15) + (slow ? 1e8 : 1e9) * std::max(0, std::min(t, 20) - 15) +
                    1e9 * std::max(0, t - 20);
      run.AddEvent(t + 0.01 * n, "counters",
                   {{"node", "n" + std::to_string(n)},
                    {"counters",
                     {{"fab0.tx_bytes", sent},
                      {"fab0.qdisc_overlimits", n == 2 ? 100.0 * std::clamp(t - 15, 0, 5) : 0}}}});
    }
  }
  TempDir dir;
  run.WriteTo(dir.path());
  std::ofstream(dir.path() / kInventoryFile) << R"({"nodes": [], "switches": [
    {"name": "sw", "role": "leaf", "ports": [
      {"name": "swp0", "to": "n0:fab0", "rate_bps": 1e10}, {"name": "swp1", "to": "n1:fab0", "rate_bps": 1e10},
      {"name": "swp2", "to": "n2:fab0", "rate_bps": 1e10}, {"name": "swp3", "to": "n3:fab0", "rate_bps": 1e10}]}]})";
  Result<RunData> data = LoadRunDir(dir.path().string());
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  return data.ok() ? *data : RunData{};
}

TEST(FabricMap, TheFaultedLinkIsRedThickAndNamedTheCulprit) {
  const RunData run = RunWithCounters();
  ASSERT_EQ(run.switches.size(), 1u);
  const Summary s = Analyze(run);
  ASSERT_EQ(s.faults.size(), 1u);
  ASSERT_TRUE(s.faults[0].localisation.has_value());
  EXPECT_EQ(s.faults[0].localisation->element, "link n2 fab0");
  // Capacity from the switch port that cables the link.
  ASSERT_EQ(s.links.size(), 4u);
  ASSERT_TRUE(s.links[2].capacity_gbps.has_value());
  EXPECT_EQ(*s.links[2].capacity_gbps, 10);
  ASSERT_TRUE(s.links[2].phases[0].utilisation.has_value());
  // ~8 Gbit/s of 10 (14 GB counted by the last sample inside the 14.5 s phase)
  EXPECT_NEAR(*s.links[2].phases[0].utilisation, 0.8, 0.05);

  const std::string svg = RenderFabricMap(s, run, CounterIndex(run.events), s.faults[0]);
  EXPECT_EQ(ParseXml(svg).error, "") << svg;
  EXPECT_NE(svg.find("stroke=\"#dc2626\" stroke-width=\"7\" data-link=\"n2 fab0\""),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("culprit (high)"), std::string::npos);
  EXPECT_NE(svg.find(">sw</text>"), std::string::npos);
  // Another node's link: no evidence, traffic down to a tenth (light blue).
  EXPECT_NE(svg.find("data-link=\"n0 fab0\""), std::string::npos);
  EXPECT_EQ(svg.find("stroke=\"#dc2626\" stroke-width=\"4\" data-link=\"n0 fab0\""),
            std::string::npos);
}

TEST(FabricMap, TheHeatMapHasARowPerLinkRedWhereCountersRoseAndTheFaultWindow) {
  const RunData run = RunWithCounters();
  const Summary s = Analyze(run);
  const std::string svg = RenderHeatMap(s, CounterIndex(run.events), 0, 41);
  EXPECT_EQ(ParseXml(svg).error, "") << svg;
  for (const char* row : {">n0 fab0<", ">n1 fab0<", ">n2 fab0<", ">n3 fab0<"}) {
    EXPECT_NE(svg.find(row), std::string::npos) << row;
  }
  EXPECT_NE(svg.find("fill=\"#dc2626\"><title>n2 fab0 15.0"), std::string::npos) << svg;
  EXPECT_NE(svg.find("data-fault=\"slow-link\""), std::string::npos);
  // 10 % of the baseline's traffic: nearly white.
  EXPECT_NE(svg.find("(10 % of its baseline)"), std::string::npos);
}

// Issue 49: the heat map was red almost everywhere, baseline included,
// "error counters rose", because TCP retransmissions counted as error
// evidence. They are their own class now, judged against the link's
// baseline share: a steady trickle is blue, a share that rose is amber,
// and red is kept for a counter that really rose.
TEST(FabricMap, RetransmissionsAreTheirOwnEvidenceJudgedAgainstTheBaselineShare) {
  SyntheticRun run = SyntheticRun::Standard();
  for (int t = 0; t <= 40; ++t) {
    for (int n = 0; n < 4; ++n) {
      // 1 GB/s each; 100 segments a second retransmitted (0.014 % of it),
      // n3 100 times that from 25 to 30 s.
      const double burst = n == 3 ? 9900.0 * std::clamp(t - 25, 0, 5) : 0;
      run.AddEvent(t + 0.01 * n, "counters",
                   {{"node", "n" + std::to_string(n)},
                    {"counters",
                     {{"fab0.tx_bytes", 1e9 * t}, {"fab0.tcp_retrans_segs", 100.0 * t + burst}}}});
    }
  }
  TempDir dir;
  run.WriteTo(dir.path());
  Result<RunData> data = LoadRunDir(dir.path().string());
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Summary s = Analyze(*data);
  const std::string svg = RenderHeatMap(s, CounterIndex(data->events), 0, 41);
  EXPECT_EQ(ParseXml(svg).error, "") << svg;
  EXPECT_EQ(svg.find("#dc2626"), std::string::npos) << "red where no error counter rose";
  EXPECT_EQ(svg.find("error counters rose"), std::string::npos);
  EXPECT_EQ(svg.find("fill=\"#d97706\"><title>n0 fab0"), std::string::npos) << svg;
  EXPECT_NE(svg.find("fill=\"#d97706\"><title>n3 fab0 26.0"), std::string::npos) << svg;
  EXPECT_NE(svg.find("TCP retransmitted more than in its baseline"), std::string::npos);
}

// A leaf/spine fabric: the spine above the leaves, its downlinks grey and
// dashed (no counters), each node link to the leaf its port is cabled to.
TEST(FabricMap, LeavesAndASpineAreDrawnWithTheirCabling) {
  RunData run = RunWithCounters();
  run.switches = {{.name = "rail0-leaf0",
                   .role = "leaf",
                   .ports = {{.name = "swp0", .to = "n0:fab0"},
                             {.name = "swp1", .to = "n1:fab0"},
                             {.name = "up0", .to = "rail0-spine:dn0"}}},
                  {.name = "rail0-leaf1",
                   .role = "leaf",
                   .ports = {{.name = "swp2", .to = "n2:fab0"},
                             {.name = "swp3", .to = "n3:fab0"},
                             {.name = "up0", .to = "rail0-spine:dn1"}}},
                  {.name = "rail0-spine",
                   .role = "spine",
                   .ports = {{.name = "dn0", .to = "rail0-leaf0:up0"},
                             {.name = "dn1", .to = "rail0-leaf1:up0"}}}};
  const Summary s = Analyze(run);
  const std::string svg = RenderFabricMap(s, run, CounterIndex(run.events), s.faults[0]);
  EXPECT_EQ(ParseXml(svg).error, "") << svg;
  for (const char* part : {">rail0-spine</text>", ">rail0-leaf0</text>", ">rail0-leaf1</text>",
                           "rail0-spine dn0 - rail0-leaf0:up0</title>"}) {
    EXPECT_NE(svg.find(part), std::string::npos) << part;
  }
  EXPECT_EQ(svg.find(">fabric</text>"), std::string::npos);
  EXPECT_EQ(svg.find("(the culprit)"), std::string::npos);

  // A culprit on a switch: the leaf port is drawn as the cable it ends (the
  // switch's own counters never make it a node), an uplink's end as the uplink.
  Summary at_port = s;
  at_port.links.push_back({.node = "rail0-leaf1", .link = "swp2"});
  at_port.faults[0].localisation->node = "rail0-leaf1";
  at_port.faults[0].localisation->link = "swp2";
  const std::string port_svg =
      RenderFabricMap(at_port, run, CounterIndex(run.events), at_port.faults[0]);
  EXPECT_NE(port_svg.find("stroke-width=\"7\" data-link=\"n2 fab0\""), std::string::npos)
      << port_svg;
  EXPECT_EQ(port_svg.find("data-link=\"rail0-leaf1 swp2\""), std::string::npos);
  Summary at_uplink = s;
  at_uplink.faults[0].localisation->node = "rail0-leaf0";
  at_uplink.faults[0].localisation->link = "up0";
  const std::string up_svg =
      RenderFabricMap(at_uplink, run, CounterIndex(run.events), at_uplink.faults[0]);
  EXPECT_NE(up_svg.find("stroke=\"#dc2626\" stroke-width=\"7\"><title>rail0-spine dn0 - "
                        "rail0-leaf0:up0 (the culprit)"),
            std::string::npos)
      << up_svg;
  EXPECT_EQ(up_svg.find("stroke-width=\"7\" data-link="), std::string::npos);
  // A whole switch the culprit (reports/whole_switch.h): its box outlined,
  // no cable drawn thick.
  Summary whole = s;
  whole.faults[0].localisation->node = "rail0-leaf1";
  whole.faults[0].localisation->link = "";
  const std::string whole_svg =
      RenderFabricMap(whole, run, CounterIndex(run.events), whole.faults[0]);
  const size_t box = whole_svg.find("stroke=\"#b91c1c\" stroke-width=\"3\"/>");
  ASSERT_NE(box, std::string::npos) << whole_svg;
  const size_t label_end = whole_svg.find("</text>", box);
  ASSERT_NE(label_end, std::string::npos);
  EXPECT_TRUE(whole_svg.substr(box, label_end - box).ends_with(">rail0-leaf1"))
      << whole_svg.substr(box, label_end - box);
  EXPECT_EQ(whole_svg.find("stroke-width=\"7\""), std::string::npos);
}

TEST(FabricMap, TrafficColoursRunFromWhiteToBlue) {
  EXPECT_EQ(TrafficColour(0), "#ffffff");
  EXPECT_EQ(TrafficColour(1), "#1d4ed8");
  EXPECT_EQ(TrafficColour(7), "#1d4ed8");
  EXPECT_EQ(TrafficColour(-1), "#ffffff");
}

TEST(FabricMap, TooManyNodesIsANoteNotADrawing) {
  SyntheticRun run = SyntheticRun::Standard();
  Summary s;
  for (size_t i = 0; i <= kMapMaxNodes; ++i)
    s.links.push_back({.node = "n" + std::to_string(i), .link = "fab0"});
  RunData data;
  const std::string out = RenderFabricMap(s, data, CounterIndex(), FaultStats{.id = "x"});
  EXPECT_NE(out.find("65 nodes: too many to draw"), std::string::npos) << out;
}

}  // namespace
}  // namespace fdrill

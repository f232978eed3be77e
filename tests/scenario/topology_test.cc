// Topology files: what they parse to, each error class with its place, and
// the queries the blast radius relies on.
#include "harness/scenario/topology.h"

#include <gtest/gtest.h>

#include "tests/scenario/scenario_text.h"

namespace fdrill {
namespace {

using scenario_test::Replace;

constexpr char kTopology[] = R"(rails:
  rail0: {devices: [mlx5_0], interfaces: [ib0, eth2]}
  rail1: {devices: mlx5_1, interfaces: [ib1]}
leaves:
  leaf01: {nodes: "gpu[001-002]", rails: [rail0]}
  leaf02: {nodes: "gpu[001-002]", rails: [rail1]}
  leaf03: {nodes: [gpu003, "gpu[004-005]"]}
nvlink_domains:
  nvl-a: {nodes: "gpu[001-004]"}
)";

std::string ErrorOf(const std::string& text) {
  auto t = ParseTopology(text, "topo.yaml");
  EXPECT_FALSE(t.ok()) << "expected an error";
  return t.ok() ? "" : t.status().message();
}

TEST(Topology, ParsesRailsLeavesAndDomains) {
  auto t = ParseTopology(kTopology, "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->file, "topo.yaml");
  ASSERT_EQ(t->rails.size(), 2u);
  EXPECT_EQ(t->rails[0].interfaces, (std::vector<std::string>{"ib0", "eth2"}));
  EXPECT_EQ(t->rails[1].devices,
            (std::vector<std::string>{"mlx5_1"}));  // one name for a list of one
  EXPECT_FALSE(t->rails[0].nodes.has_value());
  ASSERT_EQ(t->leaves.size(), 3u);
  EXPECT_EQ(t->leaves[2].nodes, (std::set<std::string>{"gpu003", "gpu004", "gpu005"}));
  EXPECT_TRUE(t->leaves[2].rails.empty());
  ASSERT_EQ(t->nvlink_domains.size(), 1u);
  EXPECT_EQ(t->nvlink_domains[0].nodes.size(), 4u);
}

TEST(Topology, AnswersRailLeafAndDomainQueries) {
  auto t = ParseTopology(kTopology, "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->RailOf("gpu001", "mlx5_0"), "rail0");
  EXPECT_EQ(t->RailOf("gpu001", "eth2"), "rail0");
  EXPECT_EQ(t->RailOf("gpu009", "ib1"), "rail1");  // a rail without nodes: is on every node
  EXPECT_EQ(t->RailOf("gpu001", "mlx5_7"), std::nullopt);
  EXPECT_EQ(t->RailsOf("gpu001"), (std::vector<std::string>{"rail0", "rail1"}));
  EXPECT_EQ(t->LeafOf("gpu002", "rail0"), "leaf01");
  EXPECT_EQ(t->LeafOf("gpu002", "rail1"), "leaf02");
  EXPECT_EQ(t->LeafOf("gpu004", "rail1"), "leaf03");  // a leaf with no rails takes every rail
  EXPECT_EQ(t->LeafOf("gpu009", "rail0"), std::nullopt);
  EXPECT_EQ(t->NvlinkDomainOf("gpu004"), "nvl-a");
  EXPECT_EQ(t->NvlinkDomainOf("gpu005"), std::nullopt);
}

// A mixed cluster: the same HCA name on different rails for disjoint nodes.
TEST(Topology, RailsMayDifferByNode) {
  auto t = ParseTopology(R"(rails:
  rail0: {devices: [mlx5_0], nodes: "gpu[01-02]"}
  rail0b: {devices: [mlx5_0], nodes: "gpu[03-04]"}
)",
                         "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->RailOf("gpu02", "mlx5_0"), "rail0");
  EXPECT_EQ(t->RailOf("gpu03", "mlx5_0"), "rail0b");
  EXPECT_EQ(t->RailOf("gpu05", "mlx5_0"), std::nullopt);
  EXPECT_EQ(t->RailsOf("gpu04"), (std::vector<std::string>{"rail0b"}));
}

TEST(Topology, UnknownKeysAreRefusedWithAHint) {
  EXPECT_EQ(ErrorOf(Replace(kTopology, "leaves:", "leafs:")),
            "topo.yaml:4:1: unknown key \"leafs\" in the topology; did you mean \"leaves\"? "
            "(allowed: leaves, nvlink_domains, rails, spines)");
  EXPECT_EQ(
      ErrorOf(Replace(kTopology, "interfaces: [ib1]", "interface: [ib1]")),
      "topo.yaml:3:28: unknown key \"interface\" in rails.rail1; did you mean \"interfaces\"? "
      "(allowed: devices, interfaces, nodes)");
  EXPECT_EQ(ErrorOf(Replace(kTopology, "nvl-a: {nodes:", "nvl-a: {node:")),
            "topo.yaml:9:11: unknown key \"node\" in nvlink_domains.nvl-a; did you mean \"nodes\"? "
            "(allowed: nodes)");
}

TEST(Topology, ADeviceOrNetdevIsOnOneRail) {
  EXPECT_EQ(ErrorOf(Replace(kTopology, "devices: mlx5_1", "devices: [mlx5_1, mlx5_0]")),
            "topo.yaml:3:29: mlx5_0 is on rails rail0 and rail1 (an HCA or netdev is on one rail; "
            "give the rails "
            "disjoint nodes: if they differ by node)");
  EXPECT_EQ(ErrorOf(Replace(kTopology, "interfaces: [ib1]", "interfaces: [ib1, eth2]")),
            "topo.yaml:3:46: eth2 is on rails rail0 and rail1 (an HCA or netdev is on one rail; "
            "give the rails "
            "disjoint nodes: if they differ by node)");
  // Overlapping node sets are still one node with the HCA on two rails.
  EXPECT_NE(ErrorOf("rails:\n  a: {devices: [mlx5_0], nodes: \"gpu[1-2]\"}\n  b: {devices: "
                    "[mlx5_0], nodes: gpu2}\n")
                .find("topo.yaml:3:17: mlx5_0 is on rails a and b"),
            std::string::npos);
}

TEST(Topology, ANodeIsOnOneLeafPerRail) {
  EXPECT_EQ(ErrorOf(Replace(kTopology, "leaf02: {nodes: \"gpu[001-002]\", rails: [rail1]}",
                            "leaf02: {nodes: \"gpu[002-003]\", rails: [rail0]}")),
            "topo.yaml:6:19: leaves.leaf02: node gpu002 is also on leaf leaf01 on rail rail0 (a "
            "port is cabled to "
            "one leaf)");
  // leaf03 takes every rail, so gpu001 there collides on rail0 first.
  EXPECT_EQ(ErrorOf(Replace(kTopology, "[gpu003, ", "[gpu001, ")),
            "topo.yaml:7:19: leaves.leaf03: node gpu001 is also on leaf leaf01 on rail rail0 (a "
            "port is cabled to "
            "one leaf)");
  // With no rails at all a leaf holds its nodes for the one fabric.
  EXPECT_EQ(ErrorOf("leaves:\n  a: {nodes: \"n[1-2]\"}\n  b: {nodes: n2}\n"),
            "topo.yaml:3:14: leaves.b: node n2 is also on leaf a (a port is cabled to one leaf)");
}

TEST(Topology, ANodeIsInOneNvlinkDomain) {
  EXPECT_EQ(ErrorOf(std::string(kTopology) + "  nvl-b: {nodes: \"gpu[004-005]\"}\n"),
            "topo.yaml:10:18: nvlink_domains.nvl-b: node gpu004 is also in NVLink domain nvl-a");
}

TEST(Topology, ALeafNamesKnownRails) {
  EXPECT_EQ(
      ErrorOf(Replace(kTopology, "rails: [rail1]", "rails: [rail2]")),
      "topo.yaml:6:43: leaves.leaf02.rails: no rail \"rail2\" in rails:; did you mean \"rail0\"?");
}

TEST(Topology, HostlistErrorsPointAtTheirPlace) {
  EXPECT_EQ(ErrorOf(Replace(kTopology, "[gpu003, \"gpu[004-005]\"]", "[gpu003, \"gpu[005-004]\"]")),
            "topo.yaml:7:28: leaves.leaf03.nodes: gpu[005-004]: range 005-004 runs backwards "
            "(character 5)");
  EXPECT_EQ(
      ErrorOf(Replace(kTopology, "nodes: \"gpu[001-004]\"", "nodes: \"gpu[001-004],gpu002\"")),
      "topo.yaml:9:18: nvlink_domains.nvl-a.nodes: gpu[001-004],gpu002: names gpu002 twice");
  EXPECT_EQ(ErrorOf(Replace(kTopology, "[gpu003, ", "[gpu004, ")),
            "topo.yaml:7:28: leaves.leaf03.nodes: node gpu004 is listed twice");
}

TEST(Topology, ShapesAreChecked) {
  EXPECT_EQ(ErrorOf("rails:\n  rail0: {}\n"),
            "topo.yaml:2:10: rails.rail0 needs devices (HCAs like mlx5_0) or interfaces (netdevs "
            "like ib0)");
  EXPECT_EQ(ErrorOf("leaves:\n  leaf01: {rails: []}\n"),
            "topo.yaml:2:11: leaves.leaf01 needs nodes (a hostlist like gpu[001-016])");
  EXPECT_EQ(ErrorOf("rails: [rail0]\n"),
            "topo.yaml:1:8: rails must be a mapping of rail names to {devices, interfaces}");
  EXPECT_EQ(ErrorOf("- rails\n"),
            "topo.yaml: a topology is a YAML mapping (rails, leaves, nvlink_domains)");
  EXPECT_EQ(ErrorOf("rails: {rail0: {devices: [}\n").rfind("topo.yaml:1:", 0), 0u);
  EXPECT_EQ(ErrorOf("rails:\n  rail0: {devices: []}\n"),
            "topo.yaml:2:20: rails.rail0.devices must be a name or a non-empty list of names");
}

constexpr char kCabled[] = R"(rails:
  rail0: {interfaces: [fab0]}
leaves:
  leaf0:
    nodes: [n0, n1]
    ports:
      swp0: {to: "n0:fab0", rate: 100mbit}
      swp1: {to: "n1:fab0", rate: 100mbit}
      up0: {to: "spine:dn0", rate: 50mbit}
  leaf1:
    nodes: [n2]
    ports:
      swp2: {to: "n2:fab0"}
      up0: {to: "spine:dn1"}
spines:
  spine:
    rails: [rail0]
    ports:
      dn0: {to: "leaf0:up0", rate: 50mbit}
      dn1: {to: "leaf1:up0"}
)";

TEST(Topology, PortsSayWhatIsCabledWhereAndTheirCapacity) {
  auto t = ParseTopology(kCabled, "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->spines.size(), 1u);
  EXPECT_EQ(t->spines[0].rails, std::vector<std::string>{"rail0"});
  const auto* leaf0 = t->SwitchPorts("leaf0");
  ASSERT_NE(leaf0, nullptr);
  ASSERT_EQ(leaf0->size(), 3u);
  EXPECT_EQ((*leaf0)[2].name, "up0");
  EXPECT_EQ((*leaf0)[2].to, "spine:dn0");
  EXPECT_EQ((*leaf0)[2].rate_bps, 50'000'000u);
  EXPECT_EQ((*t->SwitchPorts("leaf1"))[0].rate_bps, 0u);
  EXPECT_EQ(t->SwitchPorts("spine")->size(), 2u);
  EXPECT_EQ(t->SwitchPorts("leaf9"), nullptr);
}

TEST(Topology, EveryCableHasTwoEnds) {
  EXPECT_EQ(ErrorOf(Replace(kCabled, "swp1: {to: \"n1:fab0\"", "swp1: {to: \"n2:fab0\"")),
            "topo.yaml:8:18: leaves.leaf0.ports.swp1.to: n2 is neither a node of this leaf nor a "
            "switch");
  EXPECT_EQ(ErrorOf(Replace(kCabled, "dn1: {to: \"leaf1:up0\"}", "dn1: {to: \"leaf0:up0\"}")),
            "topo.yaml:14:17: leaves.leaf1.ports.up0.to: spine:dn1 is not cabled back (its to: "
            "must be leaf1:up0)");
  EXPECT_EQ(ErrorOf(Replace(kCabled, "up0: {to: \"spine:dn1\"}", "up0: {to: spine}")),
            "topo.yaml:14:17: leaves.leaf1.ports.up0.to must be NODE:IFNAME or SWITCH:PORT, got "
            "\"spine\"");
  EXPECT_NE(ErrorOf(Replace(kCabled, "rate: 100mbit}\n      swp1", "rate: 100mbps}\n      swp1"))
                .find("leaves.leaf0.ports.swp0.rate: "),
            std::string::npos);
  EXPECT_NE(ErrorOf(Replace(kCabled, "dn0: {to: \"leaf0:up0\", rate: 50mbit}",
                            "dn0: {to: \"leaf0:up0\", speed: 50mbit}"))
                .find("unknown key \"speed\" in spines.spine.ports.dn0"),
            std::string::npos);
}

TEST(Topology, LoadsFilesAndTellsThemFromDrills) {
  const std::string example = std::string(FDRILL_SOURCE_DIR) + "/scenarios/topology.example.yaml";
  auto t = LoadTopology(example);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->rails.size(), 2u);
  EXPECT_EQ(t->leaves.size(), 2u);
  EXPECT_EQ(t->nvlink_domains.size(), 4u);
  EXPECT_EQ(t->LeafOf("gpu03", "rail1"), "leaf-rail1");
  EXPECT_EQ(t->NvlinkDomainOf("gpu03"), "hgx-gpu03");
  EXPECT_EQ(LoadTopology("/nonexistent/topology.yaml").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(LoadTopology("/dev/zero").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(IsTopologyFile(example));
  EXPECT_TRUE(IsTopologyFile("topology.yaml"));
  EXPECT_FALSE(IsTopologyFile("scenarios/ib-port-flap.hw.yaml"));
  EXPECT_FALSE(IsTopologyFile("topology.txt"));
  EXPECT_FALSE(IsTopologyFile("my-topology.yaml"));
}

}  // namespace
}  // namespace fdrill

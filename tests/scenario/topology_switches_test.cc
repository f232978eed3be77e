// A real cluster's switches from its topology file and the agents'
// inventory (harness/scenario/topology_switches.h): ports derived per node
// and rail, HCA ports listed under their netdev's port, listed ports kept.
#include "harness/scenario/topology_switches.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

// The agents' inventory: gpu01 with mlx5_0 port 1 under ib0 (its rate
// unread, ib0 at 200 Gb/s) and mlx5_1 port 1 at 400 Gb/s without a netdev;
// gpu02's agent could not say.
Json TwoNodeInventory() {
  return Json::parse(R"({"nodes": [
    {"node": "gpu01", "hcas": [
      {"name": "mlx5_0", "ports": [{"port": 1, "netdevs": ["ib0"]}]},
      {"name": "mlx5_1", "ports": [{"port": 1, "netdevs": [], "rate_gbps": 400}]}],
     "netdevs": [{"name": "ib0", "speed_mbps": 200000}, {"name": "ib1"}]},
    {"node": "gpu02", "error": "connection refused"}]})");
}

// rate_bps of each port of switch NAME in SWITCHES.
std::vector<double> RatesOf(const Json& switches, const std::string& name) {
  std::vector<double> out;
  for (const Json& sw : switches) {
    if (sw["name"] != name) continue;
    for (const Json& p : sw["ports"]) out.push_back(p["rate_bps"].get<double>());
  }
  return out;
}

// (name, to) of each port of switch NAME in SWITCHES.
std::vector<std::pair<std::string, std::string>> PortsOf(const Json& switches,
                                                         const std::string& name) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Json& sw : switches) {
    if (sw["name"] != name) continue;
    for (const Json& p : sw["ports"]) out.emplace_back(p["name"], p["to"]);
  }
  return out;
}

using Ports = std::vector<std::pair<std::string, std::string>>;

TEST(TopologySwitches, ALeafOfNodesGetsAPortPerNetdevWithItsHcaPortUnderTheSameName) {
  auto t = ParseTopology(R"(rails:
  rail0: {devices: [mlx5_0], interfaces: [ib0]}
  rail1: {devices: [mlx5_1], interfaces: [ib1]}
leaves:
  leaf01: {nodes: "gpu[01-02]", rails: [rail0]}
  leaf02: {nodes: "gpu[01-02]", rails: [rail1]}
)",
                         "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Json sw = TopologySwitches(*t, TwoNodeInventory());
  ASSERT_EQ(sw.size(), 2u);
  EXPECT_EQ(sw[0]["role"], "leaf");
  EXPECT_EQ(sw[0]["rail"], "rail0");
  EXPECT_EQ(PortsOf(sw, "leaf01"), (Ports{{"gpu01/ib0", "gpu01:ib0"},
                                          {"gpu01/ib0", "gpu01:ib/mlx5_0/1"},
                                          {"gpu02/ib0", "gpu02:ib0"}}));
  // mlx5_1's port carries no netdev of rail1: a port of its own.
  EXPECT_EQ(PortsOf(sw, "leaf02"), (Ports{{"gpu01/ib1", "gpu01:ib1"},
                                          {"gpu01/mlx5_1/1", "gpu01:ib/mlx5_1/1"},
                                          {"gpu02/ib1", "gpu02:ib1"}}));
  // Each cable at the rate its node end came up at: ib0's speed for the
  // netdev and for the HCA port under it (whose own rate was not read),
  // mlx5_1's rate; 0 where nothing says (ib1 has no speed, gpu02 no agent).
  EXPECT_EQ(RatesOf(sw, "leaf01"), (std::vector<double>{200e9, 200e9, 0}));
  EXPECT_EQ(RatesOf(sw, "leaf02"), (std::vector<double>{0, 400e9, 0}));
}

TEST(TopologySwitches, ListedPortsAreKeptWithTheHcaPortUnderEachAndSpinesKeepTheirs) {
  auto t = ParseTopology(R"(rails:
  rail0: {devices: [mlx5_0], interfaces: [ib0]}
leaves:
  leaf01:
    nodes: [gpu01, gpu02]
    ports:
      swp1: {to: "gpu01:ib0", rate: 400gbit}
      swp2: {to: "gpu02:ib0"}
      up1: {to: "spine01:dn1"}
spines:
  spine01:
    ports:
      dn1: {to: "leaf01:up1"}
)",
                         "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Json sw = TopologySwitches(*t, TwoNodeInventory());
  ASSERT_EQ(sw.size(), 2u);
  EXPECT_EQ(PortsOf(sw, "leaf01"), (Ports{{"swp1", "gpu01:ib0"},
                                          {"swp1", "gpu01:ib/mlx5_0/1"},
                                          {"swp2", "gpu02:ib0"},
                                          {"up1", "spine01:dn1"}}));
  // The file's rate for the cable, on both its names; gpu02's end is not
  // known, and an uplink's rate is the file's to give.
  EXPECT_EQ(RatesOf(sw, "leaf01"), (std::vector<double>{400e9, 400e9, 0, 0}));
  EXPECT_EQ(sw[1]["role"], "spine");
  EXPECT_EQ(PortsOf(sw, "spine01"), (Ports{{"dn1", "leaf01:up1"}}));
}

TEST(TopologySwitches, AListedPortWithoutARateRunsAtItsNodeEnds) {
  auto t = ParseTopology(R"(rails:
  rail0: {devices: [mlx5_0], interfaces: [ib0]}
leaves:
  leaf01:
    nodes: [gpu01]
    ports:
      swp1: {to: "gpu01:ib0"}
)",
                         "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Json sw = TopologySwitches(*t, TwoNodeInventory());
  EXPECT_EQ(PortsOf(sw, "leaf01"), (Ports{{"swp1", "gpu01:ib0"}, {"swp1", "gpu01:ib/mlx5_0/1"}}));
  EXPECT_EQ(RatesOf(sw, "leaf01"), (std::vector<double>{200e9, 200e9}));
}

// rail0 is ib0 on one node type and eth2 on another: gpu01's agent lists
// ib0 and ib1, so it has no eth2 cable; gpu02's agent could not say.
TEST(TopologySwitches, ARailInterfaceANodeDoesNotHaveIsNoPortOfIt) {
  auto t = ParseTopology(R"(rails:
  rail0: {devices: [mlx5_0], interfaces: [ib0, eth2]}
leaves:
  leaf01: {nodes: "gpu[01-02]"}
)",
                         "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(PortsOf(TopologySwitches(*t, TwoNodeInventory()), "leaf01"),
            (Ports{{"gpu01/ib0", "gpu01:ib0"},
                   {"gpu01/ib0", "gpu01:ib/mlx5_0/1"},
                   {"gpu02/ib0", "gpu02:ib0"},
                   {"gpu02/eth2", "gpu02:eth2"}}));
}

TEST(TopologySwitches, NoLeavesNoSwitchesAndANodeWithoutHcasHasItsNetdevsOnly) {
  auto bare = ParseTopology("nvlink_domains:\n  nvl-a: {nodes: gpu01}\n", "topo.yaml");
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_TRUE(TopologySwitches(*bare, TwoNodeInventory()).empty());
  auto t = ParseTopology(R"(rails:
  rail0: {devices: [mlx5_0], interfaces: [ib0]}
leaves:
  leaf01: {nodes: gpu01}
)",
                         "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(
      PortsOf(TopologySwitches(*t, Json::parse(R"({"nodes": [{"node": "gpu01"}]})")), "leaf01"),
      (Ports{{"gpu01/ib0", "gpu01:ib0"}}));
}

// A cluster's file lists every leaf; a drill on two nodes has one of them,
// and the spine that faces only the others is not the run's either.
TEST(TopologySwitches, OnlyTheLeavesOfTheDrillsNodesAndTheSpinesFacingThem) {
  auto t = ParseTopology(R"(rails:
  rail0: {devices: [mlx5_0], interfaces: [ib0]}
leaves:
  leaf01:
    nodes: "gpu[01-02]"
    ports:
      up1: {to: "spine01:dn1"}
  leaf02:
    nodes: "gpu[03-04]"
    ports:
      up1: {to: "spine02:dn1"}
spines:
  spine01:
    ports:
      dn1: {to: "leaf01:up1"}
  spine02:
    ports:
      dn1: {to: "leaf02:up1"}
  spine03: {}
)",
                         "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Json sw = TopologySwitches(*t, TwoNodeInventory());
  std::vector<std::string> names;
  for (const Json& s : sw) names.push_back(s["name"]);
  // spine03 lists no ports: nothing says it is not ours.
  EXPECT_EQ(names, (std::vector<std::string>{"leaf01", "spine01", "spine03"}));
}

}  // namespace
}  // namespace fdrill

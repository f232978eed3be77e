// The map `fabric up` writes is a topology file the scenario loader reads
// back, and it says what was built: rails, leaves, spine, cabling, capacity.
#include "fabric/fabric_topology.h"

#include <gtest/gtest.h>

#include "fabric/fabric_state.h"
#include "harness/scenario/topology.h"

namespace fdrill {
namespace {

TEST(FabricTopologyTest, TieredFabricMapReadsBackAsATopologyFile) {
  FabricShape shape;
  shape.nodes = 8;
  shape.rails = 2;
  shape.leaves = 2;
  shape.oversubscription = 2;
  shape.port_rate_bps = 100'000'000;
  auto state = PlanFabric(FabricLayout::Default(), shape, "/bin/agent");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(TopologyPath(state->state_dir), "/run/fdrill/fabric/topology.yaml");
  const std::string text = TopologyYaml(shape);
  auto t = ParseTopology(text, "topology.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString() << "\n" << text;
  EXPECT_EQ(t->rails.size(), 2u);
  EXPECT_EQ(t->RailOf("n5", "fab1"), "rail1");
  EXPECT_EQ(t->LeafOf("n5", "rail1"), "rail1-leaf1");
  EXPECT_EQ(t->LeafOf("n2", "rail0"), "rail0-leaf0");
  ASSERT_EQ(t->leaves.size(), 4u);
  ASSERT_EQ(t->spines.size(), 2u);
  const auto* leaf = t->SwitchPorts("rail1-leaf1");
  ASSERT_NE(leaf, nullptr);
  ASSERT_EQ(leaf->size(), 5u);
  EXPECT_EQ((*leaf)[0].name, "swp4");
  EXPECT_EQ((*leaf)[0].to, "n4:fab1");
  EXPECT_EQ((*leaf)[0].rate_bps, 100'000'000u);
  EXPECT_EQ((*leaf)[4].name, "up0");
  EXPECT_EQ((*leaf)[4].to, "rail1-spine:dn1");
  EXPECT_EQ((*leaf)[4].rate_bps, 200'000'000u);  // 4 x 100 Mbit/s / 2
  EXPECT_EQ(t->SwitchPorts("rail1-spine")->size(), 2u);
  // The map is what PlanFabric builds: every switch, port, cable and rate.
  size_t switches = 0;
  for (const auto& sw : state->switches) {
    const auto* ports = t->SwitchPorts(sw.name);
    ASSERT_NE(ports, nullptr) << sw.name;
    ++switches;
    ASSERT_EQ(ports->size(), sw.ports.size()) << sw.name;
    for (size_t i = 0; i < ports->size(); ++i) {
      EXPECT_EQ((*ports)[i].name, sw.ports[i].name) << sw.name;
      EXPECT_EQ((*ports)[i].to, sw.ports[i].peer) << sw.name;
      EXPECT_EQ((*ports)[i].rate_bps, sw.ports[i].rate_bps) << sw.name;
    }
  }
  EXPECT_EQ(switches, t->leaves.size() + t->spines.size());
  for (const auto& n : state->nodes) {
    for (const auto& port : n.fabric) {
      EXPECT_EQ(t->RailOf(n.name, port.ifname), RailName(port.rail)) << n.name;
      EXPECT_EQ(t->LeafOf(n.name, RailName(port.rail)), port.leaf) << n.name;
    }
  }
}

TEST(FabricTopologyTest, FlatFabricIsOneLeafWithoutCapacities) {
  auto state = PlanFabric(FabricLayout::Default(), 4, "/bin/agent");
  ASSERT_TRUE(state.ok());
  auto t = ParseTopology(TopologyYaml(state->shape), "topology.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->leaves.size(), 1u);
  EXPECT_EQ(t->leaves[0].name, "sw");
  EXPECT_EQ(t->leaves[0].nodes.size(), 4u);
  EXPECT_TRUE(t->spines.empty());
  for (const auto& p : t->leaves[0].ports) EXPECT_EQ(p.rate_bps, 0u) << p.name;
  EXPECT_EQ(TopologyYaml(state->shape).find("rate:"), std::string::npos);
}

}  // namespace
}  // namespace fdrill

// DrillTargetsOfFabric and DrillTargetsOfHosts (agent_set.h): what a drill
// is told of where its agents are, resolved once before it runs — from a
// planned emulated fabric (PlanFabric, nothing built) or a real cluster's
// host names — and DrillTargets' look-ups.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fabric/fabric_state.h"
#include "harness/controller/agent_set.h"

namespace fdrill {
namespace {

FabricState Planned(const FabricShape& shape) {
  auto f = PlanFabric(FabricLayout::Default(), shape, "/usr/bin/fdrill-agent");
  EXPECT_TRUE(f.ok()) << f.status().message();
  return f.ok() ? *f : FabricState{};
}

// Each emulated node's agent on its management address and port, its
// TMPDIR, its rail-0 address; the rails' subnets; the shape with its node
// count; the pki dir.
TEST(DrillTargets, AnEmulatedFabricsNodesAreItsManagementAgents) {
  FabricShape shape;
  shape.nodes = 4;
  shape.rails = 2;
  FabricState fabric = Planned(shape);
  fabric.pki_dir = "/run/fdrill/fabric/pki";
  const DrillTargets t = DrillTargetsOfFabric(fabric);
  ASSERT_EQ(t.nodes.size(), 4u);
  const DrillTarget& n1 = t.nodes[1];
  EXPECT_EQ(n1.name, "n1");
  EXPECT_EQ(n1.host, fabric.nodes[1].MgmtIp());
  EXPECT_EQ(n1.host, "198.19.0.2");
  EXPECT_EQ(n1.port, 7100);
  EXPECT_EQ(n1.tmpdir, fabric.nodes[1].tmpdir);
  EXPECT_EQ(n1.fabric_ip, "198.18.0.2");
  EXPECT_TRUE(n1.has_agent);
  EXPECT_EQ(t.rail_subnets, (std::vector<std::string>{"198.18.0.0/24", "198.18.1.0/24"}));
  EXPECT_EQ(t.shape, shape);
  EXPECT_EQ(t.pki_dir, "/run/fdrill/fabric/pki");
}

// The fabric's switches, each with its agent only once one was started (a
// planned fabric's have none yet), and their cabling as inventory.json
// lists it.
TEST(DrillTargets, AnEmulatedFabricsSwitchesAndCabling) {
  FabricShape shape;
  shape.nodes = 4;
  shape.leaves = 2;
  FabricState fabric = Planned(shape);
  ASSERT_FALSE(fabric.switches.empty());
  fabric.switches[0].agent.agent_pid = 4242;
  const DrillTargets t = DrillTargetsOfFabric(fabric);
  ASSERT_EQ(t.switches.size(), fabric.switches.size());
  const DrillTarget* first = t.FindSwitch(fabric.switches[0].name);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(first->has_agent);
  EXPECT_EQ(first->host, fabric.switches[0].agent.MgmtIp());
  EXPECT_FALSE(t.switches[1].has_agent);
  EXPECT_EQ(t.FindSwitch("rail7-leaf0"), nullptr);
  EXPECT_EQ(t.cabling, Json::parse(SwitchesJson(fabric)));
  EXPECT_TRUE(t.cabling.is_array());
}

// A fabric state without switches (as a real cluster's empty one was)
// gives no cabling, not an empty list.
TEST(DrillTargets, NoSwitchesNoCabling) {
  FabricState fabric = Planned(FabricShape{});
  fabric.switches.clear();
  EXPECT_TRUE(DrillTargetsOfFabric(fabric).cabling.is_null());
}

// Real nodes are dialled by their own names at the agents' port, TMPDIR
// /tmp until hello says; nothing else is known before they answer.
TEST(DrillTargets, RealNodesAreDialledByName) {
  const DrillTargets t = DrillTargetsOfHosts({"gpu01", "gpu02"}, 7200);
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.nodes[1].name, "gpu02");
  EXPECT_EQ(t.nodes[1].host, "gpu02");
  EXPECT_EQ(t.nodes[1].port, 7200);
  EXPECT_EQ(t.nodes[1].tmpdir, "/tmp");
  EXPECT_EQ(t.nodes[1].fabric_ip, "");
  EXPECT_TRUE(t.switches.empty());
  EXPECT_TRUE(t.rail_subnets.empty());
  EXPECT_TRUE(t.cabling.is_null());
  EXPECT_EQ(t.pki_dir, "");
  ASSERT_NE(t.FindNode("gpu01"), nullptr);
  EXPECT_EQ(t.FindNode("gpu03"), nullptr);
}

// The same fabric's agents as `fdrill inventory` and `fdrill panic` dial
// them: the targets and AgentsOfFabric agree.
TEST(DrillTargets, TheDrillDialsTheAgentsInventoryDials) {
  const FabricState fabric = Planned(FabricShape{});
  const DrillTargets t = DrillTargetsOfFabric(fabric);
  const std::vector<AgentAddress> agents = AgentsOfFabric(fabric);
  ASSERT_EQ(agents.size(), t.nodes.size());
  for (size_t i = 0; i < agents.size(); ++i) {
    EXPECT_EQ(agents[i].node, t.nodes[i].name);
    EXPECT_EQ(agents[i].host, t.nodes[i].host);
    EXPECT_EQ(agents[i].port, t.nodes[i].port);
  }
}

}  // namespace
}  // namespace fdrill

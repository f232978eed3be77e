#include "fabric/fabric_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fabric/inventory.h"
#include "fabric/node_enter.h"
#include "tests/fabric/fake_node_system.h"
#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

TEST(FabricStateTest, PlanNamesEverythingByLayout) {
  auto state = PlanFabric(FabricLayout::Default(), 3, "/bin/agent");
  ASSERT_TRUE(state.ok());
  ASSERT_EQ(state->nodes.size(), 3u);
  const FabricNode& n2 = state->nodes[2];
  EXPECT_EQ(n2.name, "n2");
  EXPECT_EQ(n2.netns, "fdrill-n2");
  EXPECT_EQ(n2.NetnsPath(), "/run/netns/fdrill-n2");
  EXPECT_EQ(n2.uts_path, "/run/fdrill/fabric/n2/uts");
  EXPECT_EQ(n2.mgmt_addr, "198.19.0.3/24");
  EXPECT_EQ(n2.MgmtIp(), "198.19.0.3");
  ASSERT_EQ(n2.fabric.size(), 1u);
  EXPECT_EQ(n2.fabric[0].ifname, "fab0");
  EXPECT_EQ(n2.fabric[0].addr, "198.18.0.3/24");
  EXPECT_EQ(n2.FabricIp(), "198.18.0.3");
  EXPECT_EQ(n2.mgmt_peer, "fdm-n2");
  EXPECT_EQ(n2.fabric[0].leaf, "sw");
  EXPECT_EQ(n2.fabric[0].leaf_port, "swp2");
  EXPECT_EQ(n2.tmpdir, "/run/fdrill/fabric/n2/tmp");
  EXPECT_EQ(n2.state_dir, "/run/fdrill/fabric/n2/state");
  EXPECT_EQ(n2.agent_port, 7100);
  EXPECT_EQ(state->controller_addr, "198.19.0.254/24");
  EXPECT_EQ(state->mgmt_bridge, "fdm-br");
  ASSERT_EQ(state->switches.size(), 1u);
  EXPECT_EQ(state->switches[0].netns, "fdrill-sw");
  EXPECT_EQ(state->switches[0].PortNames(), "swp0, swp1, swp2");
  EXPECT_EQ(state->switches[0].ports[1].peer, "n1:fab0");
  EXPECT_EQ(state->switches[0].ports[1].rate_bps, 0u);
}

FabricShape Shape(int nodes, int rails, int leaves, double k = 1, uint64_t rate = 0) {
  FabricShape shape;
  shape.nodes = nodes;
  shape.rails = rails;
  shape.leaves = leaves;
  shape.oversubscription = k;
  shape.port_rate_bps = rate;
  return shape;
}

TEST(FabricStateTest, RailsLeavesAndSpineAreNamedAndCabled) {
  auto state = PlanFabric(FabricLayout::Default(), Shape(8, 2, 2, 2, 1'000'000'000), "/bin/agent");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  std::vector<std::string> names;
  for (const auto& sw : state->switches) names.push_back(sw.name + "/" + sw.role);
  EXPECT_EQ(names, (std::vector<std::string>{"rail0-leaf0/leaf", "rail0-leaf1/leaf",
                                             "rail0-spine/spine", "rail1-leaf0/leaf",
                                             "rail1-leaf1/leaf", "rail1-spine/spine"}));
  const FabricSwitch* leaf = state->FindSwitch("rail1-leaf1");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->netns, "fdrill-rail1-leaf1");
  EXPECT_EQ(leaf->PortNames(), "swp4, swp5, swp6, swp7, up0");
  EXPECT_EQ(leaf->FindPort("swp5")->peer, "n5:fab1");
  EXPECT_EQ(leaf->FindPort("swp5")->rate_bps, 1'000'000'000u);
  // 4 nodes per leaf x 1 Gbit/s / 2:1 oversubscription.
  EXPECT_EQ(leaf->FindPort("up0")->rate_bps, 2'000'000'000u);
  EXPECT_EQ(leaf->FindPort("up0")->peer, "rail1-spine:dn1");
  EXPECT_EQ(state->FindSwitch("rail1-spine")->FindPort("dn1")->peer, "rail1-leaf1:up0");
  const FabricNode& n5 = state->nodes[5];
  ASSERT_EQ(n5.fabric.size(), 2u);
  EXPECT_EQ(n5.fabric[1].addr, "198.18.1.6/24");
  EXPECT_EQ(n5.fabric[1].leaf, "rail1-leaf1");
  EXPECT_EQ(n5.fabric[0].leaf, "rail0-leaf1");
  EXPECT_EQ(state->RailSubnets(), (std::vector<std::string>{"198.18.0.0/24", "198.18.1.0/24"}));
  EXPECT_EQ(state->FindNode("198.18.1.6"), &state->nodes[5]);
}

TEST(FabricStateTest, ShapesThatCannotBeBuiltNameTheFlag) {
  const FabricLayout layout = FabricLayout::Default();
  auto err = [&](FabricShape shape) { return CheckShape(layout, shape).message(); };
  EXPECT_EQ(err(Shape(6, 1, 4)),
            "--leaves 4 does not divide --nodes 6: every leaf holds the same number of nodes "
            "(nodes per leaf = nodes / leaves); use a divisor of 6");
  EXPECT_THAT(err(Shape(4, 9, 1)), ::testing::HasSubstr("--rails must be 1..8, got 9"));
  EXPECT_THAT(err(Shape(4, 1, 0)), ::testing::HasSubstr("--leaves must be 1..16, got 0"));
  EXPECT_THAT(err(Shape(4, 1, 2, 2)), ::testing::HasSubstr("--oversubscription needs --port-rate"));
  EXPECT_THAT(err(Shape(4, 1, 1, 2, 1000)), ::testing::HasSubstr("needs --leaves 2 or more"));
  EXPECT_THAT(err(Shape(4, 1, 2, 0, 1000)), ::testing::HasSubstr("--oversubscription must be"));
  FabricLayout high = layout;
  high.fabric_net = "198.18.254";
  EXPECT_THAT(CheckShape(high, Shape(4, 3, 1)).message(),
              ::testing::HasSubstr("--rails 3 does not fit after 198.18.254.0/24"));
  EXPECT_TRUE(CheckShape(layout, Shape(8, 2, 2, 4, 1000)).ok());
}

TEST(FabricStateTest, VersionOneFilesLoadAsOneFlatSwitch) {
  const std::string v1 = R"({"version": 1, "state_dir": "/run/fdrill/fabric",
    "switch_netns": "fdrill-sw", "switch_bridge": "br0", "mgmt_bridge": "fdm-br",
    "controller_addr": "198.19.0.254/24", "agent_bin": "/bin/agent", "pki_dir": "",
    "nodes": [{"name": "n0", "netns": "fdrill-n0", "uts_path": "/run/fdrill/fabric/n0/uts",
      "mgmt_if": "mgmt0", "mgmt_addr": "198.19.0.1/24", "mgmt_peer": "fdm-n0",
      "fabric_if": "fab0", "fabric_addr": "198.18.0.1/24", "switch_port": "swp0",
      "tmpdir": "/t", "state_dir": "/s", "agent_log": "/l", "agent_port": 7100,
      "agent_pid": 42}]})";
  auto state = FabricStateFromJson(v1);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto flat = PlanFabric(FabricLayout::Default(), 1, "/bin/agent");
  EXPECT_EQ(state->version, 2);
  EXPECT_EQ(state->nodes[0].agent_pid, 42);
  EXPECT_EQ(state->nodes[0].fabric.size(), 1u);
  EXPECT_EQ(FabricStateToJson(*state).find("switch_netns"), std::string::npos);
  EXPECT_EQ(state->switches.size(), 1u);
  EXPECT_EQ(state->switches[0].netns, flat->switches[0].netns);
  EXPECT_EQ(state->switches[0].PortNames(), "swp0");
  EXPECT_EQ(state->nodes[0].fabric[0].leaf_port, "swp0");
}

TEST(FabricStateTest, TwoHundredNodesFitInterfaceNameLimits) {
  auto state = PlanFabric(FabricLayout::Default(), kMaxFabricNodes, "/bin/agent");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->nodes.back().mgmt_addr, "198.19.0.200/24");
  EXPECT_LE(state->nodes.back().mgmt_peer.size(), 15u);
  EXPECT_FALSE(PlanFabric(FabricLayout::Default(), 0, "/bin/agent").ok());
  EXPECT_FALSE(PlanFabric(FabricLayout::Default(), kMaxFabricNodes + 1, "/bin/agent").ok());
}

TEST(FabricStateTest, JsonRoundTripsAndLoads) {
  auto state = PlanFabric(FabricLayout::Default(), 2, "/bin/agent");
  ASSERT_TRUE(state.ok());
  state->nodes[1].agent_pid = 77;
  FakeSysFs fs;
  ASSERT_TRUE(SaveFabricState(fs, *state).ok());
  auto loaded = LoadFabricState(fs, "/run/fdrill/fabric");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(FabricStateToJson(*loaded), FabricStateToJson(*state));
  EXPECT_EQ(loaded->nodes[1].agent_pid, 77);
}

TEST(FabricStateTest, SupervisorAndRestartsRoundTripAndDefaultToNoneInOlderFiles) {
  auto state = PlanFabric(FabricLayout::Default(), 1, "/bin/agent");
  ASSERT_TRUE(state.ok());
  state->supervisor_pid = 55;
  state->nodes[0].agent_restarts = 3;
  state->switches[0].agent.agent_restarts = 1;
  auto back = FabricStateFromJson(FabricStateToJson(*state));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->supervisor_pid, 55);
  EXPECT_EQ(back->nodes[0].agent_restarts, 3);
  EXPECT_EQ(back->switches[0].agent.agent_restarts, 1);
  // A fabric.json written before supervision: nobody supervises, no restarts.
  auto old = nlohmann::json::parse(FabricStateToJson(*state));
  old.erase("supervisor_pid");
  old["nodes"][0].erase("agent_restarts");
  old["switches"][0]["agent"].erase("agent_restarts");
  auto loaded = FabricStateFromJson(old.dump());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->supervisor_pid, 0);
  EXPECT_EQ(loaded->nodes[0].agent_restarts, 0);
}

TEST(FabricStateTest, LoadSaysNoFabricOrBadFile) {
  FakeSysFs fs;
  auto missing = LoadFabricState(fs, "/run/fdrill/fabric");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  fs.files["/run/fdrill/fabric/fabric.json"] = "{\"version\": 1}";
  auto bad = LoadFabricState(fs, "/run/fdrill/fabric");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(FabricStateTest, FindNodeByNameAddressOrUserAtHost) {
  auto state = PlanFabric(FabricLayout::Default(), 4, "/bin/agent");
  ASSERT_TRUE(state.ok());
  ASSERT_NE(state->FindNode("n3"), nullptr);
  EXPECT_EQ(state->FindNode("198.18.0.2")->name, "n1");
  EXPECT_EQ(state->FindNode("198.19.0.3")->name, "n2");
  EXPECT_EQ(state->FindNode("root@198.18.0.4")->name, "n3");
  EXPECT_EQ(state->FindNode("198.18.0.5"), nullptr);
  EXPECT_EQ(state->FindNode("n4"), nullptr);
}

TEST(FabricStateTest, RshRunsTheJoinedWordsWithShLikeSshd) {
  EXPECT_EQ(
      RshShellArgv({"PATH=/usr/bin:$PATH", ";", "export", "PATH", ";", "/usr/bin/orted", "-mca",
                    "ess", "\"env\""}),
      (std::vector<std::string>{
          "/bin/sh", "-c", "PATH=/usr/bin:$PATH ; export PATH ; /usr/bin/orted -mca ess \"env\""}));
}

TEST(FabricStateTest, RshRejectsUnknownHostWithoutEnteringAnything) {
  auto state = PlanFabric(FabricLayout::Default(), 2, "/bin/agent");
  ASSERT_TRUE(state.ok());
  Status s = RshExec(*state, {"198.18.0.9", "true"});
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(RshExec(*state, {"n0"}).code(), StatusCode::kInvalidArgument);
}

TEST(InventoryTest, ParsesNetnsLinksAndMounts) {
  EXPECT_EQ(ParseNetnsList("fdrill-n0 (id: 3)\nfdrill-sw\n\n"),
            (std::vector<std::string>{"fdrill-n0", "fdrill-sw"}));
  EXPECT_EQ(ParseLinkNames("1: lo: <LOOPBACK> mtu 65536\n5: fdm-n0@if3: <BROADCAST> mtu 1500\n"),
            (std::vector<std::string>{"lo", "fdm-n0"}));
  EXPECT_EQ(ParseMountsUnder("1 2 0:4 uts:[1] /run/fdrill/fabric/n0/uts rw - nsfs nsfs rw\n"
                             "1 2 0:4 uts:[1] /run/fdrill/fabric2/n0/uts rw - nsfs nsfs rw\n"
                             "1 2 0:4 / /run/fdrill/fabric rw - tmpfs tmpfs rw\n",
                             "/run/fdrill/fabric"),
            (std::vector<std::string>{"/run/fdrill/fabric/n0/uts", "/run/fdrill/fabric"}));
  EXPECT_EQ(WithPrefix({"fdrill-n0", "xfdrill-n1", "fdrill-sw"}, "fdrill-"),
            (std::vector<std::string>{"fdrill-n0", "fdrill-sw"}));
}

TEST(InventoryTest, AgentAliveOnlyWhenCmdlineNamesTheAgentForThatNode) {
  FakeSysFs fs;
  fs.files["/proc/10/cmdline"] =
      ProcCmdline({"/opt/bin/fdrill-agent", "--node", "n1", "--listen", "x"});
  fs.files["/proc/11/cmdline"] =
      ProcCmdline({"/usr/bin/python3", "/opt/bin/agent.py", "--node", "n1"});
  fs.files["/proc/12/cmdline"] = "";  // a zombie
  fs.files["/proc/13/cmdline"] = ProcCmdline({"/usr/bin/sleep", "100"});
  EXPECT_TRUE(AgentAlive(fs, "/opt/bin/fdrill-agent", "n1", 10));
  EXPECT_FALSE(AgentAlive(fs, "/opt/bin/fdrill-agent", "n0", 10));
  EXPECT_TRUE(AgentAlive(fs, "/opt/bin/agent.py", "n1", 11));
  EXPECT_FALSE(AgentAlive(fs, "/opt/bin/fdrill-agent", "n1", 12));
  EXPECT_FALSE(AgentAlive(fs, "/opt/bin/fdrill-agent", "n1", 13));
  EXPECT_FALSE(AgentAlive(fs, "/opt/bin/fdrill-agent", "n1", 14));
  EXPECT_FALSE(AgentAlive(fs, "/opt/bin/fdrill-agent", "n1", 0));
}

TEST(InventoryTest, FindAgentsListsEveryProcessRunningANodesAgentOnItsStateDir) {
  FakeSysFs fs;
  const std::string bin = "/opt/bin/fdrill-agent";
  fs.files["/proc/10/cmdline"] =
      ProcCmdline({bin, "--node", "n1", "--listen", "x", "--state-dir", "/run/f/n1/state"});
  fs.files["/proc/11/cmdline"] =  // another fabric's n1
      ProcCmdline({bin, "--node", "n1", "--state-dir", "/run/other/n1/state"});
  fs.files["/proc/12/cmdline"] =
      ProcCmdline({bin, "--node", "n1", "--state-dir", "/run/f/n1/state", "--insecure"});
  fs.files["/proc/13/cmdline"] = ProcCmdline({"/usr/bin/sleep", "--state-dir", "/run/f/n1/state"});
  fs.files["/proc/self/mountinfo"] = "";
  EXPECT_THAT(FindAgents(fs, bin, "n1", "/run/f/n1/state"), ::testing::ElementsAre(10, 12));
  EXPECT_TRUE(FindAgents(fs, bin, "n0", "/run/f/n1/state").empty());
}

}  // namespace
}  // namespace fdrill

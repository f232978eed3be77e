#include "fabric/fabric_state.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(n2.fabric_addr, "198.18.0.3/24");
  EXPECT_EQ(n2.FabricIp(), "198.18.0.3");
  EXPECT_EQ(n2.mgmt_peer, "fdm-n2");
  EXPECT_EQ(n2.switch_port, "swp2");
  EXPECT_EQ(n2.tmpdir, "/run/fdrill/fabric/n2/tmp");
  EXPECT_EQ(n2.state_dir, "/run/fdrill/fabric/n2/state");
  EXPECT_EQ(n2.agent_port, 7100);
  EXPECT_EQ(state->controller_addr, "198.19.0.254/24");
  EXPECT_EQ(state->mgmt_bridge, "fdm-br");
  EXPECT_EQ(state->switch_netns, "fdrill-sw");
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

}  // namespace
}  // namespace fdrill

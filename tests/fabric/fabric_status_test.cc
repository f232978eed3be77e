#include "fabric/fabric_status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/fabric/fake_node_system.h"
#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

using ::testing::HasSubstr;

TEST(FabricStatusTest, ParsesLinkStates) {
  auto states = ParseLinkStates(
      "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT\n"
      "2: fab0@if2: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc noqueue state "
      "LOWERLAYERDOWN mode DEFAULT\n"
      "3: mgmt0@if9: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode "
      "DEFAULT\n");
  ASSERT_EQ(states.size(), 3u);
  EXPECT_EQ(states[1], (std::pair<std::string, std::string>{"fab0", "LOWERLAYERDOWN"}));
  EXPECT_EQ(states[2], (std::pair<std::string, std::string>{"mgmt0", "UP"}));
}

TEST(FabricStatusTest, ReportsAgentsAndLinksPerNode) {
  FakeProcessRunner runner;
  FakeSysFs fs;
  SteppingClock clock;
  FakeNodeSystem node(&clock);
  auto state = PlanFabric(FabricLayout::Default(), 2, "/opt/bin/fdrill-agent");
  ASSERT_TRUE(state.ok());
  state->nodes[0].agent_pid = 10;
  state->nodes[1].agent_pid = 11;
  ASSERT_TRUE(SaveFabricState(fs, *state).ok());
  fs.files["/proc/10/cmdline"] = ProcCmdline({"/opt/bin/fdrill-agent", "--node", "n0"});
  runner.OnOutput({"ip", "-n", "fdrill-sw"},
                  "2: swp0@if2: <UP,LOWER_UP> mtu 1500 state UP\n3: swp1@if2: <BROADCAST> mtu 1500 "
                  "state DOWN\n");
  runner.OnOutput({"ip", "-n", "fdrill-n0"},
                  "2: fab0@if2: <UP,LOWER_UP> mtu 1500 state UP\n3: mgmt0@if9: <UP,LOWER_UP> mtu "
                  "1500 state UP\n");
  runner.OnFail({"ip", "-n", "fdrill-n1"}, "Cannot open network namespace \"fdrill-n1\"", 1);

  auto status = GetFabricStatus("/run/fdrill/fabric", FabricHost{&runner, &fs, &node, &clock});
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  ASSERT_EQ(status->nodes.size(), 2u);
  EXPECT_TRUE(status->nodes[0].agent_alive);
  EXPECT_EQ(status->nodes[0].fabric_links, std::vector<std::string>{"UP"});
  EXPECT_EQ(status->nodes[0].switch_ports, std::vector<std::string>{"UP"});
  EXPECT_FALSE(status->nodes[1].agent_alive);
  EXPECT_EQ(status->nodes[1].fabric_links, std::vector<std::string>{"missing"});
  EXPECT_EQ(status->nodes[1].switch_ports, std::vector<std::string>{"DOWN"});

  std::string table = RenderStatusTable(*status);
  EXPECT_THAT(table, HasSubstr("n0     198.19.0.1/24    198.18.0.1/24    10 alive"));
  EXPECT_THAT(table, HasSubstr("11 dead"));
  auto json = nlohmann::json::parse(RenderStatusJson(*status));
  EXPECT_EQ(json["nodes"][0]["agent_alive"], true);
  EXPECT_EQ(json["nodes"][1]["links"]["sw:swp1"], "DOWN");
  EXPECT_EQ(json["nodes"][1]["mgmt_addr"], "198.19.0.2/24");
}

TEST(FabricStatusTest, ShowsEachAgentsRestartsAndWhetherTheSupervisorLives) {
  FakeProcessRunner runner;
  FakeSysFs fs;
  SteppingClock clock;
  FakeNodeSystem node(&clock);
  auto state = PlanFabric(FabricLayout::Default(), 1, "/opt/bin/fdrill-agent");
  ASSERT_TRUE(state.ok());
  state->nodes[0].agent_pid = 12;
  state->nodes[0].agent_restarts = 2;
  state->supervisor_pid = 40;
  ASSERT_TRUE(SaveFabricState(fs, *state).ok());
  fs.files["/proc/12/cmdline"] = ProcCmdline({"/opt/bin/fdrill-agent", "--node", "n0"});
  fs.files["/proc/40/cmdline"] =
      ProcCmdline({"/opt/bin/fdrill", "fabric", "supervise", "--state-dir", "/run/fdrill/fabric"});
  const FabricHost host{&runner, &fs, &node, &clock};

  auto status = GetFabricStatus("/run/fdrill/fabric", host);
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_TRUE(status->supervisor_alive);
  std::string table = RenderStatusTable(*status);
  EXPECT_THAT(table, HasSubstr("supervisor: pid 40 alive"));
  EXPECT_THAT(table, HasSubstr("12 alive         2"));
  auto json = nlohmann::json::parse(RenderStatusJson(*status));
  EXPECT_EQ(json["supervisor_pid"], 40);
  EXPECT_EQ(json["supervisor_alive"], true);
  EXPECT_EQ(json["nodes"][0]["agent_restarts"], 2);

  fs.files.erase("/proc/40/cmdline");  // the supervisor crashed
  status = GetFabricStatus("/run/fdrill/fabric", host);
  ASSERT_TRUE(status.ok());
  EXPECT_FALSE(status->supervisor_alive);
  EXPECT_THAT(RenderStatusTable(*status), HasSubstr("DEAD: agents that die stay dead"));
}

TEST(FabricStatusTest, NoFabricIsNotFound) {
  FakeProcessRunner runner;
  FakeSysFs fs;
  SteppingClock clock;
  FakeNodeSystem node(&clock);
  auto status = GetFabricStatus("/run/fdrill/fabric", FabricHost{&runner, &fs, &node, &clock});
  EXPECT_EQ(status.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace fdrill

// `fdrill fabric up` over the recording fakes (FabricUpFixture): the exact
// ip commands of a 2-node fabric, waiting for the switch's ports, state and
// UTS directories and mount points, rails, leaves and spine, the refusals
// that touch nothing, the rollback of a failure half-way, the supervisor
// and the agents' start. Its sshd and Slurm are in fabric_up_sshd_test.cc.
#include "fabric/fabric_up.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fabric/agent_supervisor.h"
#include "tests/fabric/fabric_up_fixture.h"

namespace fdrill {
namespace {

using Argv = std::vector<std::string>;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FabricUpTest : public FabricUpFixture {
 protected:
  FabricUpTest() : FabricUpFixture(2) {}
};

TEST_F(FabricUpTest, TwoNodesRunExactlyTheseIpCommands) {
  auto state = FabricUp(options_, Host());
  ASSERT_TRUE(state.ok()) << state.status().ToString();

  std::vector<Argv> expected = {
      {"ip", "netns", "list"},
      {"ip", "-o", "link", "show"},
      {"ip", "link", "add", "fdm-br", "type", "bridge"},
      {"ip", "addr", "add", "198.19.0.254/24", "dev", "fdm-br"},
      {"ip", "link", "set", "fdm-br", "up"},
      {"ip", "netns", "add", "fdrill-sw"},
      {"ip", "-n", "fdrill-sw", "link", "add", "br0", "type", "bridge"},
      {"ip", "-n", "fdrill-sw", "link", "set", "br0", "up"},
  };
  for (std::string i : {"0", "1"}) {
    std::string ns = "fdrill-n" + i;
    std::string host = std::to_string(std::stoi(i) + 1);
    std::vector<Argv> node = {
        {"ip", "netns", "add", ns},
        {"ip", "-n", ns, "link", "set", "lo", "up"},
        {"ip", "link", "add", "swp" + i, "netns", "fdrill-sw", "type", "veth", "peer", "name",
         "fab0", "netns", ns},
        {"ip", "-n", "fdrill-sw", "link", "set", "swp" + i, "master", "br0"},
        {"ip", "-n", "fdrill-sw", "link", "set", "swp" + i, "up"},
        {"ip", "-n", ns, "addr", "add", "198.18.0." + host + "/24", "dev", "fab0"},
        {"ip", "-n", ns, "link", "set", "fab0", "up"},
        {"ip", "link", "add", "fdm-n" + i, "type", "veth", "peer", "name", "mgmt0", "netns", ns},
        {"ip", "link", "set", "fdm-n" + i, "master", "fdm-br"},
        {"ip", "link", "set", "fdm-n" + i, "up"},
        {"ip", "-n", ns, "addr", "add", "198.19.0." + host + "/24", "dev", "mgmt0"},
        {"ip", "-n", ns, "link", "set", "mgmt0", "up"},
    };
    expected.insert(expected.end(), node.begin(), node.end());
  }
  // The switch's management side last: its agent on 198.19.0.201.
  std::vector<Argv> sw = {
      {"ip", "-n", "fdrill-sw", "link", "set", "lo", "up"},
      {"ip", "link", "add", "fdm-s0", "type", "veth", "peer", "name", "mgmt0", "netns",
       "fdrill-sw"},
      {"ip", "link", "set", "fdm-s0", "master", "fdm-br"},
      {"ip", "link", "set", "fdm-s0", "up"},
      {"ip", "-n", "fdrill-sw", "addr", "add", "198.19.0.201/24", "dev", "mgmt0"},
      {"ip", "-n", "fdrill-sw", "link", "set", "mgmt0", "up"},
  };
  expected.insert(expected.end(), sw.begin(), sw.end());
  // Agents ready, then the switch's ports and the nodes' links read until
  // none is DOWN.
  expected.push_back({"ip", "-n", "fdrill-sw", "-o", "link", "show"});
  expected.push_back({"ip", "-n", "fdrill-n0", "-o", "link", "show"});
  expected.push_back({"ip", "-n", "fdrill-n1", "-o", "link", "show"});
  EXPECT_EQ(runner_.CallsStartingWith({"ip"}), expected);
}

// `ip -o link show` in a switch: swp1 as the kernel prints a veth whose
// operstate linkwatch has not caught up with yet.
constexpr char kSwp1Down[] =
    "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT\\    "
    "link/loopback 00:00:00:00:00:00\n"
    "2: br0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT\\"
    "    link/ether 4a:dc:db:d8:14:f7\n"
    "3: swp1@if3: <NO-CARRIER,BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue master br0 "
    "state DOWN mode DEFAULT\\    link/ether 4a:dc:db:d8:14:f7\n";

TEST_F(FabricUpTest, UpReturnsOnceNoSwitchPortReadsDown) {
  runner_.On({"ip", "-n", "fdrill-sw", "-o", "link", "show"}, ProcessResult{0, kSwp1Down, ""}, 3);
  auto state = FabricUp(options_, Host());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(runner_.CallsStartingWith({"ip", "-n", "fdrill-sw", "-o", "link", "show"}).size(), 4u);
}

TEST_F(FabricUpTest, APortThatStaysDownFailsNamingItAndRollsBack) {
  runner_.On({"ip", "-n", "fdrill-sw", "-o", "link", "show"}, ProcessResult{0, kSwp1Down, ""});
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(state.status().message(),
              HasSubstr("1 switch port(s) still DOWN 10s after the fabric was built: sw:swp1"));
  EXPECT_EQ(runner_.CallsStartingWith({"kill"}).size(), 3u);
  EXPECT_EQ(runner_.CallsStartingWith({"ip", "netns", "del"}).size(), 3u);
}

TEST_F(FabricUpTest, CreatesStateDirsAndUtsNamespacesThenStartsAgents) {
  auto state = FabricUp(options_, Host());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  const std::string d = "/run/fdrill/fabric";
  EXPECT_THAT(
      runner_.CallsStartingWith({"mkdir"}),
      ElementsAre(Argv{"mkdir", "-p", d},
                  Argv{"mkdir", "-p", d + "/n0/tmp", d + "/n0/state", d + "/n0/root/etc/fdrill",
                       d + "/n0/root/var/lib/fdrill"},
                  Argv{"mkdir", "-p", d + "/n1/tmp", d + "/n1/state", d + "/n1/root/etc/fdrill",
                       d + "/n1/root/var/lib/fdrill"},
                  Argv{"mkdir", "-p", d + "/sw/tmp", d + "/sw/state"},
                  // The machine has neither: made as mount points, recorded.
                  Argv{"mkdir", "-p", "/etc/fdrill"}, Argv{"mkdir", "-p", "/var/lib/fdrill"}));
  EXPECT_THAT(runner_.CallsStartingWith({"unshare"}),
              ElementsAre(Argv{"unshare", "--uts=" + d + "/n0/uts", "hostname", "n0"},
                          Argv{"unshare", "--uts=" + d + "/n1/uts", "hostname", "n1"},
                          Argv{"unshare", "--uts=" + d + "/sw/uts", "hostname", "sw"}));
  EXPECT_EQ(runner_.CallsStartingWith({"touch"}).size(), 3u);

  // Two node agents, then the switch's, allowed its ports alone.
  ASSERT_EQ(node_.spawned.size(), 3u);
  EXPECT_EQ(node_.spawned[2].argv,
            (Argv{"/opt/fdrill/bin/fdrill-agent", "--node", "sw", "--listen", "198.19.0.201:7100",
                  "--state-dir", d + "/sw/state", "--allow", "swp0", "--allow", "swp1", "--allow",
                  "br0", "--tls-ca", d + "/pki/ca.pem", "--tls-cert", d + "/pki/sw.pem",
                  "--tls-key", d + "/pki/sw.key"}));
  EXPECT_EQ(node_.spawned[2].netns_path, "/run/netns/fdrill-sw");
  EXPECT_EQ(state->switches[0].agent.agent_pid, 1002);
  const SpawnSpec& s1 = node_.spawned[1];
  EXPECT_EQ(s1.argv,
            (Argv{"/opt/fdrill/bin/fdrill-agent", "--node", "n1", "--listen", "198.19.0.2:7100",
                  "--state-dir", d + "/n1/state", "--tls-ca", d + "/pki/ca.pem", "--tls-cert",
                  d + "/pki/n1.pem", "--tls-key", d + "/pki/n1.key"}));
  EXPECT_EQ(s1.netns_path, "/run/netns/fdrill-n1");
  EXPECT_EQ(s1.uts_path, d + "/n1/uts");
  EXPECT_EQ(s1.tmpdir, d + "/n1/tmp");
  EXPECT_EQ(s1.log_path, d + "/n1/agent.log");
  EXPECT_EQ(s1.files_root, d + "/n1/root");    // its own /etc/fdrill, /var/lib/fdrill
  EXPECT_EQ(node_.spawned[2].files_root, "");  // a switch's agent: the machine's

  EXPECT_EQ(state->nodes[0].agent_pid, 1000);
  EXPECT_EQ(state->nodes[1].agent_pid, 1001);
  auto saved = LoadFabricState(fs_, d);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_EQ(saved->nodes[1].agent_pid, 1001);
  EXPECT_EQ(saved->agent_bin, "/opt/fdrill/bin/fdrill-agent");
}

TEST_F(FabricUpTest, MountPointsTheMachineHasAreLeftAloneAndThoseMadeAreUndoneByDown) {
  fs_.files["/etc/fdrill/agent.conf"] = "";  // the package is installed here
  auto state = FabricUp(options_, Host());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_THAT(runner_.CallsStartingWith({"mkdir", "-p", "/etc/fdrill"}), ::testing::IsEmpty());
  EXPECT_THAT(runner_.CallsStartingWith({"mkdir", "-p", "/var/lib/fdrill"}), ::testing::SizeIs(1));
  EXPECT_THAT(state->made_dirs, ElementsAre("/var/lib/fdrill"));
  auto saved = LoadFabricState(fs_, "/run/fdrill/fabric");
  ASSERT_TRUE(saved.ok());
  EXPECT_THAT(saved->made_dirs, ElementsAre("/var/lib/fdrill"));
}

TEST_F(FabricUpTest, AFailedUpRemovesTheMountPointsItMade) {
  runner_.On({"ip", "-n", "fdrill-sw", "-o", "link", "show"}, ProcessResult{0, kSwp1Down, ""});
  ASSERT_FALSE(FabricUp(options_, Host()).ok());
  EXPECT_THAT(runner_.CallsStartingWith({"rmdir"}),
              ElementsAre(Argv{"rmdir", "--ignore-fail-on-non-empty", "/var/lib/fdrill"},
                          Argv{"rmdir", "--ignore-fail-on-non-empty", "/etc/fdrill"}));
}

TEST_F(FabricUpTest, NoAgentsStartsNoAgentAndNoSupervisor) {
  options_.agents = false;
  options_.supervisor_argv = {"/opt/fdrill/bin/fdrill", "fabric", "supervise"};
  auto state = FabricUp(options_, Host());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_TRUE(node_.spawned.empty());
  EXPECT_EQ(state->supervisor_pid, 0);
  for (const auto& n : state->nodes) EXPECT_EQ(n.agent_pid, 0) << n.name;
}

TEST_F(FabricUpTest, RailsLeavesAndSpineAreCabledAndShapedOnTheSwitchSide) {
  options_.shape.nodes = 4;
  options_.shape.rails = 2;
  options_.shape.leaves = 2;
  options_.shape.oversubscription = 2;
  options_.shape.port_rate_bps = 1'000'000'000;
  auto state = FabricUp(options_, Host());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  const auto& calls = runner_.calls();
  auto has = [&](const Argv& argv) {
    return std::find(calls.begin(), calls.end(), argv) != calls.end();
  };
  EXPECT_TRUE(has({"ip", "netns", "add", "fdrill-rail1-spine"}));
  EXPECT_TRUE(has({"ip", "link", "add", "up0", "netns", "fdrill-rail1-leaf1", "type", "veth",
                   "peer", "name", "dn1", "netns", "fdrill-rail1-spine"}));
  EXPECT_TRUE(has({"ip", "-n", "fdrill-rail1-spine", "link", "set", "dn1", "master", "br0"}));
  // n3 sits on leaf 1 of each rail, fab1 on rail 1's.
  EXPECT_TRUE(has({"ip", "link", "add", "swp3", "netns", "fdrill-rail1-leaf1", "type", "veth",
                   "peer", "name", "fab1", "netns", "fdrill-n3"}));
  EXPECT_TRUE(has({"ip", "-n", "fdrill-n3", "addr", "add", "198.18.1.4/24", "dev", "fab1"}));
  // Capacity on the switch side only: 1 Gbit/s ports, 2 nodes x 1 Gbit/s / 2 uplinks.
  auto tc = runner_.CallsStartingWith({"tc"});
  // per rail: 4 node ports, 2 up0, 2 dn; each a tbf and its explicit queue
  EXPECT_EQ(tc.size(), 2u * 2u * (4 + 2 + 2));
  EXPECT_TRUE(
      has({"tc", "-n", "fdrill-rail0-leaf1", "qdisc", "replace", "dev", "swp2", "root", "handle",
           "1:", "tbf", "rate", "1000000000bit", "burst", "1250000", "latency", "20ms"}));
  EXPECT_TRUE(
      has({"tc", "-n", "fdrill-rail0-spine", "qdisc", "replace", "dev", "dn0", "root", "handle",
           "1:", "tbf", "rate", "1000000000bit", "burst", "1250000", "latency", "20ms"}));
  // 20 ms of rate plus the burst, as an explicit fifo a fault can swap out and back.
  EXPECT_TRUE(has({"tc", "-n", "fdrill-rail0-spine", "qdisc", "replace", "dev", "dn0", "parent",
                   "1:1", "handle", "10:", "bfifo", "limit", "3750000"}));
  for (const auto& argv : tc) EXPECT_EQ(argv[2].rfind("fdrill-rail", 0), 0u) << argv[2];
  // Every tc step comes after the last link is made.
  auto first_tc =
      std::find_if(calls.begin(), calls.end(), [](const Argv& a) { return a[0] == "tc"; });
  EXPECT_EQ(
      std::find_if(first_tc, calls.end(),
                   [](const Argv& a) { return a[0] == "ip" && a[1] == "link" && a[2] == "add"; }),
      calls.end());
}

TEST_F(FabricUpTest, UnbuildableShapeTouchesNothing) {
  options_.shape.nodes = 6;
  options_.shape.leaves = 4;
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_THAT(state.status().message(), HasSubstr("--leaves 4 does not divide --nodes 6"));
  EXPECT_TRUE(runner_.calls().empty());
}

TEST_F(FabricUpTest, MoreNodesThanMemoryHoldsTouchesNothing) {
  fs_.files["/proc/meminfo"] = "MemTotal:  1024000 kB\nMemAvailable:     262144 kB\n";
  options_.shape.nodes = 8;  // 8 x 64 MiB > 256 MiB
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().message(),
            "--nodes 8 needs about 512 MiB (64 MiB a node: its agent, namespaces and a rank of the "
            "workload) and this machine has 256 MiB available (/proc/meminfo); use at most "
            "--nodes 4");
  EXPECT_TRUE(runner_.calls().empty());
  options_.shape.nodes = 4;
  EXPECT_TRUE(FabricUp(options_, Host()).ok());
}

TEST_F(FabricUpTest, RefusesWhenAFabricExistsAndTouchesNothing) {
  runner_.OnOutput({"ip", "netns", "list"},
                   "fdrill-n1 (id: 2)\nfdrill-n0 (id: 1)\nfdrill-sw\nother\n");
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(state.status().message(),
            "fabric already up with 2 nodes; run `fdrill fabric down` first");
  EXPECT_THAT(runner_.calls(),
              ElementsAre(Argv{"ip", "netns", "list"}, Argv{"ip", "-o", "link", "show"}));
  EXPECT_TRUE(node_.spawned.empty());
}

TEST_F(FabricUpTest, RefusesOnAStrayManagementLink) {
  runner_.OnOutput({"ip", "-o", "link", "show"},
                   "9: fdm-br: <BROADCAST,MULTICAST> mtu 1500 state DOWN\n");
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_THAT(state.status().message(), HasSubstr("run `fdrill fabric down` first"));
  EXPECT_EQ(runner_.calls().size(), 2u);
}

TEST_F(FabricUpTest, FailureHalfWayUndoesWhatWasMadeInReverse) {
  runner_.OnFail({"ip", "-n", "fdrill-n1", "addr", "add"}, "RTNETLINK answers: File exists");
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_THAT(state.status().message(),
              HasSubstr("`ip -n fdrill-n1 addr add 198.18.0.2/24 dev fab0` exited 2: RTNETLINK "
                        "answers: File exists"));
  EXPECT_THAT(state.status().message(), HasSubstr("rolled back"));

  const auto& calls = runner_.calls();
  auto failed =
      std::find(calls.begin(), calls.end(),
                Argv{"ip", "-n", "fdrill-n1", "addr", "add", "198.18.0.2/24", "dev", "fab0"});
  ASSERT_NE(failed, calls.end());
  std::vector<Argv> after(failed + 1, calls.end());
  const std::string d = "/run/fdrill/fabric";
  EXPECT_THAT(
      after,
      ElementsAre(Argv{"ip", "netns", "del", "fdrill-n1"}, Argv{"umount", d + "/n0/uts"},
                  Argv{"ip", "link", "del", "fdm-n0"}, Argv{"ip", "netns", "del", "fdrill-n0"},
                  Argv{"ip", "netns", "del", "fdrill-sw"}, Argv{"ip", "link", "del", "fdm-br"},
                  Argv{"rm", "-rf", "--one-file-system", d}));
  EXPECT_TRUE(node_.spawned.empty());
}

TEST_F(FabricUpTest, HalfDoneUtsMountIsUnmountedToo) {
  runner_.OnFail({"unshare"}, "hostname: boom");
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(runner_.CallsStartingWith({"umount"}).size(), 1u);
}

TEST_F(FabricUpTest, StartsTheSupervisorLastInTheRootNamespaceAndRecordsIt) {
  options_.supervisor_argv = SupervisorArgv("/usr/bin/fdrill", options_.layout.state_dir);
  auto state = FabricUp(options_, Host());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  ASSERT_EQ(node_.spawned.size(), 4u);  // n0, n1, sw, then the supervisor
  const SpawnSpec& spec = node_.spawned.back();
  EXPECT_EQ(spec.argv, options_.supervisor_argv);
  EXPECT_EQ(spec.netns_path, "") << "it runs in the root namespace";
  EXPECT_EQ(spec.log_path, "/run/fdrill/fabric/supervisor.log");
  EXPECT_EQ(state->supervisor_pid, 1003);
  auto saved = LoadFabricState(fs_, "/run/fdrill/fabric");
  ASSERT_TRUE(saved.ok());
  EXPECT_EQ(saved->supervisor_pid, 1003) << "fabric.json names it: it may start supervising";
}

TEST_F(FabricUpTest, WithoutASupervisorArgvNoneIsStarted) {
  auto state = FabricUp(options_, Host());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(node_.spawned.size(), 3u);
  EXPECT_EQ(state->supervisor_pid, 0);
}

TEST_F(FabricUpTest, ASupervisorThatCannotStartRollsEverythingBack) {
  options_.supervisor_argv = SupervisorArgv("/usr/bin/fdrill", options_.layout.state_dir);
  node_.fail_spawn_at = 3;
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_THAT(state.status().message(), HasSubstr("starting the agents' supervisor"));
  EXPECT_EQ(runner_.CallsStartingWith({"kill"}).size(), 3u);
  EXPECT_EQ(runner_.CallsStartingWith({"ip", "netns", "del"}).size(), 3u);
}

TEST_F(FabricUpTest, AgentThatFailsToStartKillsTheOnesStarted) {
  node_.fail_spawn_at = 1;
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_THAT(state.status().message(), HasSubstr("starting the agent on n1: exec: No such file"));
  EXPECT_THAT(runner_.CallsStartingWith({"kill"}), ElementsAre(Argv{"kill", "-s", "KILL", "1000"}));
  EXPECT_EQ(runner_.CallsStartingWith({"ip", "netns", "del"}).size(), 3u);
  EXPECT_EQ(runner_.CallsStartingWith({"rm"}).size(), 1u);
}

TEST_F(FabricUpTest, AgentsThatNeverListenTimeOutAndRollBack) {
  node_.connects = false;
  // Both nodes' agents and the switch's stay alive but never accept.
  fs_.files["/proc/1000/cmdline"] = ProcCmdline({"/opt/fdrill/bin/fdrill-agent", "--node", "n0"});
  fs_.files["/proc/1001/cmdline"] = ProcCmdline({"/opt/fdrill/bin/fdrill-agent", "--node", "n1"});
  fs_.files["/proc/1002/cmdline"] = ProcCmdline({"/opt/fdrill/bin/fdrill-agent", "--node", "sw"});
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(
      state.status().message(),
      HasSubstr("3 agent(s) did not accept a connection within 10s, first n0 on 198.19.0.1:7100"));
  EXPECT_EQ(runner_.CallsStartingWith({"kill"}).size(), 3u);
}

TEST_F(FabricUpTest, AgentThatExitsIsReportedWithItsLog) {
  node_.connects = false;
  node_.on_spawn = [&](const SpawnSpec& spec) {
    fs_.files[spec.log_path] = "fdrill-agent: bind 198.19.0.1:7100: Address in use\n";
  };
  auto state = FabricUp(options_, Host());
  ASSERT_FALSE(state.ok());
  EXPECT_THAT(state.status().message(), HasSubstr("agent on n0 (pid 1000) exited"));
  EXPECT_THAT(state.status().message(), HasSubstr("Address in use"));
}

TEST_F(FabricUpTest, NoWaitSkipsTheReadinessProbe) {
  node_.connects = false;
  options_.wait_ready = false;
  EXPECT_TRUE(FabricUp(options_, Host()).ok());
}

TEST_F(FabricUpTest, RejectsNodeCountsOutOfRange) {
  for (int n : {0, 201}) {
    options_.shape.nodes = n;
    auto state = FabricUp(options_, Host());
    ASSERT_FALSE(state.ok());
    EXPECT_EQ(state.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(runner_.calls().empty());
}

}  // namespace
}  // namespace fdrill

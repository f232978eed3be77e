#include "fabric/fabric_down.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fabric/agent_supervisor.h"
#include "tests/fabric/fake_node_system.h"
#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

using Argv = std::vector<std::string>;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kAgent[] = "/opt/fdrill/bin/fdrill-agent";

class FabricDownTest : public ::testing::Test {
 protected:
  FabricDownTest() : node_(&clock_) {
    fs_.files["/proc/self/mountinfo"] = "22 1 0:21 / /proc rw - proc proc rw\n";
  }
  FabricHost Host() { return FabricHost{&runner_, &fs_, &node_, &clock_}; }

  // What a crash leaves: namespaces, links and mounts, no fabric.json.
  void Leftovers() {
    fs_.files["/proc/self/mountinfo"] +=
        "45 27 0:4 uts:[4026532319] /run/fdrill/fabric/n0/uts rw - nsfs nsfs rw\n"
        "46 27 0:4 uts:[4026532320] /run/fdrill/fabric/n1/uts rw - nsfs nsfs rw\n"
        "47 27 0:4 uts:[4026532321] /run/fdrill/fabric-e2e/n0/uts rw - nsfs nsfs rw\n";
    runner_.OnOutput(
        {"ip", "netns", "list"},
        "fdrill-n1 (id: 2)\nfdt-n0 (id: 5)\nfdrill-sw (id: 0)\nfdrill-n0 (id: 1)\nblue\n");
    runner_.OnOutput(
        {"ip", "-o", "link", "show"},
        "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN\n"
        "4: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1400 state UP\n"
        "7: fdm-br: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP\n"
        "9: fdm-n0@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 master fdm-br state UP\n"
        "11: fdm-n1@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 master fdm-br state UP\n"
        "12: fdmx: <BROADCAST,MULTICAST> mtu 1500 state DOWN\n");
    fs_.files["/run/fdrill/fabric/n0/agent.log"] = "";
  }

  void WriteState(int pid0, int pid1) {
    auto state = PlanFabric(FabricLayout::Default(), 2, kAgent);
    ASSERT_TRUE(state.ok());
    state->nodes[0].agent_pid = pid0;
    state->nodes[1].agent_pid = pid1;
    ASSERT_TRUE(SaveFabricState(fs_, *state).ok());
  }

  FakeProcessRunner runner_;
  FakeSysFs fs_;
  SteppingClock clock_;
  FakeNodeSystem node_;
};

TEST_F(FabricDownTest, FindsEverythingByPrefixWithoutFabricJson) {
  Leftovers();
  auto report = FabricDown(DownOptions{}, Host());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const std::string d = "/run/fdrill/fabric";
  EXPECT_THAT(
      runner_.calls(),
      ElementsAre(Argv{"ip", "netns", "list"}, Argv{"ip", "-o", "link", "show"},
                  Argv{"ip", "netns", "pids", "fdrill-n1"},
                  Argv{"ip", "netns", "pids", "fdrill-sw"},
                  Argv{"ip", "netns", "pids", "fdrill-n0"}, Argv{"ip", "link", "del", "fdm-n0"},
                  Argv{"ip", "link", "del", "fdm-n1"}, Argv{"ip", "link", "del", "fdm-br"},
                  Argv{"ip", "netns", "del", "fdrill-n1"}, Argv{"ip", "netns", "del", "fdrill-sw"},
                  Argv{"ip", "netns", "del", "fdrill-n0"}, Argv{"umount", d + "/n0/uts"},
                  Argv{"umount", d + "/n1/uts"}, Argv{"rm", "-rf", "--one-file-system", d},
                  // /run/fdrill, which `up` made, when nothing else is in it.
                  Argv{"rmdir", "--ignore-fail-on-non-empty", "/run/fdrill"}));
  EXPECT_FALSE(report->found_nothing);
  EXPECT_EQ(report->removed.size(), 9u);
}

TEST_F(FabricDownTest, RemovesTheMountPointsUpMadeWhenEmpty) {
  Leftovers();
  auto state = PlanFabric(FabricLayout::Default(), 2, kAgent);
  ASSERT_TRUE(state.ok());
  state->made_dirs = {"/etc/fdrill"};
  ASSERT_TRUE(SaveFabricState(fs_, *state).ok());
  auto report = FabricDown(DownOptions{}, Host());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_THAT(runner_.CallsStartingWith({"rmdir"}),
              ElementsAre(Argv{"rmdir", "--ignore-fail-on-non-empty", "/run/fdrill"},
                          Argv{"rmdir", "--ignore-fail-on-non-empty", "/etc/fdrill"}));
}

// `up --sshd` crashed: no fabric.json, an sshd still running with the
// fabric's sshd_config (its title rewritten, as sshd does), and a process
// left in n1's namespace (an ssh session's orted). The sshd gets SIGTERM;
// what is left in a namespace SIGKILL, by pid; nothing else is signalled.
TEST_F(FabricDownTest, StopsTheNodesSshdsAndKillsWhatIsLeftInTheNamespaces) {
  Leftovers();
  fs_.files["/proc/5151/cmdline"] =
      ProcCmdline({"sshd: /usr/sbin/sshd -D -e -f /run/fdrill/fabric/ssh/sshd_config -o "
                   "ListenAddress=198.19.0.2:22 [listener] 0 of 10-100 startups"});
  fs_.files["/proc/6161/cmdline"] =
      ProcCmdline({"/usr/sbin/sshd", "-D", "-f", "/etc/ssh/sshd_config"});
  // Another machine's fabric on this kernel (a chroot: its own /run), under
  // the same paths: not ours.
  fs_.files["/proc/8181/cmdline"] =
      ProcCmdline({"/usr/sbin/sshd", "-D", "-e", "-f", "/run/fdrill/fabric/ssh/sshd_config"});
  fs_.links["/proc/8181/root"] = "/var/tmp/fdrill-fresh-1";
  fs_.links["/proc/5151/root"] = "/";
  runner_.OnOutput({"ip", "netns", "pids", "fdrill-n1"}, "7171\n7272\n");
  int sleeps = 0;
  node_.on_sleep = [&] {
    if (++sleeps == 1) fs_.files.erase("/proc/5151/cmdline");  // the sshd exits on SIGTERM
  };
  auto report = FabricDown(DownOptions{}, Host());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_THAT(runner_.CallsStartingWith({"kill"}),
              ElementsAre(Argv{"kill", "-s", "TERM", "5151"}, Argv{"kill", "-s", "KILL", "7171"},
                          Argv{"kill", "-s", "KILL", "7272"}));
  EXPECT_EQ(report->sshds_stopped, 1);
  EXPECT_EQ(report->processes_killed, 2);
}

TEST_F(FabricDownTest, OnNothingSaysSoAndRunsNothingDestructive) {
  auto report = FabricDown(DownOptions{}, Host());
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->found_nothing);
  EXPECT_THAT(runner_.calls(),
              ElementsAre(Argv{"ip", "netns", "list"}, Argv{"ip", "-o", "link", "show"}));
}

TEST_F(FabricDownTest, TermsAgentsAndKillsTheOneThatStaysAfterGrace) {
  Leftovers();
  WriteState(4242, 4343);
  fs_.files["/proc/4242/cmdline"] =
      ProcCmdline({kAgent, "--node", "n0", "--listen", "198.19.0.1:7100"});
  fs_.files["/proc/4343/cmdline"] =
      ProcCmdline({kAgent, "--node", "n1", "--listen", "198.19.0.2:7100"});
  int sleeps = 0;
  node_.on_sleep = [&] {
    if (++sleeps == 2) fs_.files.erase("/proc/4242/cmdline");  // n0 exits; n1 ignores SIGTERM
  };
  auto report = FabricDown(DownOptions{}, Host());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_THAT(runner_.CallsStartingWith({"kill"}),
              ElementsAre(Argv{"kill", "-s", "TERM", "4242"}, Argv{"kill", "-s", "TERM", "4343"},
                          Argv{"kill", "-s", "KILL", "4343"}));
  EXPECT_EQ(report->agents_stopped, 2);
  EXPECT_EQ(report->agents_killed, 1);
  EXPECT_GE(clock_.Now().time_since_epoch(), std::chrono::seconds(3));
  // Agents are stopped before anything is torn down.
  EXPECT_EQ(runner_.calls()[0], (Argv{"kill", "-s", "TERM", "4242"}));
}

// The supervisor goes first, so nothing restarts an agent being stopped;
// what it restarted meanwhile (fabric.json rewritten) is what gets stopped.
TEST_F(FabricDownTest, StopsTheSupervisorFirstThenTheAgentsItLastRecorded) {
  Leftovers();
  WriteState(4242, 4343);
  {
    auto state = LoadFabricState(fs_, "/run/fdrill/fabric");
    ASSERT_TRUE(state.ok());
    state->supervisor_pid = 4000;
    ASSERT_TRUE(SaveFabricState(fs_, *state).ok());
  }
  std::string cmdline;
  for (const auto& w : SupervisorArgv("/usr/bin/fdrill", "/run/fdrill/fabric"))
    cmdline += w + std::string(1, '\0');
  fs_.files["/proc/4000/cmdline"] = cmdline;
  fs_.files["/proc/4242/cmdline"] = ProcCmdline({kAgent, "--node", "n0"});
  fs_.files["/proc/5555/cmdline"] = ProcCmdline({kAgent, "--node", "n1"});
  node_.on_sleep = [&] {
    if (!fs_.files.count("/proc/4000/cmdline")) {
      fs_.files.erase("/proc/4242/cmdline");
      fs_.files.erase("/proc/5555/cmdline");
      return;
    }
    // The supervisor's last act: n1 restarted as 5555, recorded; then it exits.
    auto state = LoadFabricState(fs_, "/run/fdrill/fabric");
    ASSERT_TRUE(state.ok());
    state->nodes[1].agent_pid = 5555;
    ASSERT_TRUE(SaveFabricState(fs_, *state).ok());
    fs_.files.erase("/proc/4000/cmdline");
  };
  auto report = FabricDown(DownOptions{}, Host());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->supervisor_stopped);
  EXPECT_THAT(runner_.CallsStartingWith({"kill"}),
              ElementsAre(Argv{"kill", "-s", "TERM", "4000"}, Argv{"kill", "-s", "TERM", "4242"},
                          Argv{"kill", "-s", "TERM", "5555"}));
  EXPECT_EQ(report->agents_stopped, 2);
}

// A supervisor SIGKILLed between starting an agent and recording its pid:
// the agent is found in /proc by its node and state dir.
TEST_F(FabricDownTest, StopsAnAgentFabricJsonDoesNotName) {
  Leftovers();
  WriteState(4242, 4343);
  fs_.files["/proc/4242/cmdline"] = ProcCmdline({kAgent, "--node", "n0"});
  fs_.files["/proc/6000/cmdline"] =
      ProcCmdline({kAgent, "--node", "n1", "--state-dir", "/run/fdrill/fabric/n1/state"});
  node_.on_sleep = [&] {
    fs_.files.erase("/proc/4242/cmdline");
    fs_.files.erase("/proc/6000/cmdline");
  };
  auto report = FabricDown(DownOptions{}, Host());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_THAT(runner_.CallsStartingWith({"kill"}),
              ElementsAre(Argv{"kill", "-s", "TERM", "4242"}, Argv{"kill", "-s", "TERM", "6000"}));
}

TEST_F(FabricDownTest, NeverSignalsARecycledPid) {
  Leftovers();
  WriteState(4242, 4343);
  fs_.files["/proc/4242/cmdline"] = ProcCmdline({"/usr/sbin/sshd", "-D"});
  fs_.files["/proc/4343/cmdline"] = ProcCmdline({kAgent, "--node", "n0"});  // wrong node
  auto report = FabricDown(DownOptions{}, Host());
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(runner_.CallsStartingWith({"kill"}).empty());
}

TEST_F(FabricDownTest, KeepsGoingAndReportsEveryFailure) {
  Leftovers();
  runner_.OnFail({"ip", "netns", "del", "fdrill-sw"},
                 "Cannot remove namespace file: Device or resource busy", 1);
  runner_.OnFail({"umount"}, "umount: target is busy.", 32);
  auto report = FabricDown(DownOptions{}, Host());
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.status().message(), HasSubstr("`ip netns del fdrill-sw` exited 1"));
  EXPECT_THAT(report.status().message(), HasSubstr("umount /run/fdrill/fabric/n1/uts"));
  EXPECT_EQ(runner_.CallsStartingWith({"ip", "netns", "del"}).size(), 3u);
  EXPECT_EQ(runner_.CallsStartingWith({"rm"}).size(), 1u);
}

TEST_F(FabricDownTest, ALinkAlreadyGoneCountsAsRemoved) {
  Leftovers();
  runner_.OnFail({"ip", "link", "del", "fdm-n1"}, "Cannot find device \"fdm-n1\"", 1);
  EXPECT_TRUE(FabricDown(DownOptions{}, Host()).ok());
}

TEST_F(FabricDownTest, RefusesAShallowStateDir) {
  DownOptions options;
  options.layout.state_dir = "/run";
  auto report = FabricDown(options, Host());
  ASSERT_FALSE(report.ok());
  EXPECT_TRUE(runner_.calls().empty());
}

}  // namespace
}  // namespace fdrill

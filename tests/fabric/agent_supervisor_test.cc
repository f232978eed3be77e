// The agents' supervisor (fabric/agent_supervisor.h) against recording
// fakes: /proc in a FakeSysFs, spawns in a FakeNodeSystem, a clock that
// moves only when told.
#include "fabric/agent_supervisor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fabric/fabric_up.h"
#include "tests/fabric/fake_node_system.h"
#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kSupervisedAgent[] = "/opt/fdrill/bin/fdrill-agent";
constexpr char kDir[] = "/run/fdrill/fabric";

std::string CmdlineOf(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += w + std::string(1, '\0');
  return out;
}

TEST(RestartSchedule, RestartsAfterTheDelay) {
  RestartSchedule schedule({.restart_delay = milliseconds(500)});
  const Clock::TimePoint t0{seconds(100)};
  EXPECT_EQ(schedule.OnDeath(t0), t0 + milliseconds(500));
}

TEST(RestartSchedule, GivesUpAtTheStartLimitAndNotOnceTheIntervalHasPassed) {
  RestartPolicy policy{
      .restart_delay = seconds(1), .start_limit_burst = 3, .start_limit_interval = seconds(10)};
  RestartSchedule schedule(policy);
  Clock::TimePoint now{seconds(100)};
  for (int i = 0; i < 3; ++i) {
    auto at = schedule.OnDeath(now);
    ASSERT_TRUE(at.has_value()) << "start " << i;
    schedule.OnStart(*at);
    now = *at;
  }
  // Starts at 101, 102, 103: a fourth at 104 would be the fourth in 10 s.
  EXPECT_FALSE(schedule.OnDeath(now).has_value());
  // By 111.5 the start at 101 has left the interval that would end at 112.5.
  EXPECT_TRUE(schedule.OnDeath(Clock::TimePoint{seconds(111) + milliseconds(500)}).has_value());
}

class AgentSupervisorTest : public ::testing::Test {
 protected:
  AgentSupervisorTest() : node_(&clock_) {
    node_.files = &fs_;
    auto planned = PlanFabric(FabricLayout::Default(), 2, kSupervisedAgent);
    EXPECT_TRUE(planned.ok());
    state_ = *planned;
    state_.nodes[0].agent_pid = 100;
    state_.nodes[1].agent_pid = 101;
    state_.switches[0].agent.agent_pid = 102;
    state_.supervisor_pid = 50;
    for (const FabricNode* n : state_.AgentHosts()) Alive(n->agent_pid, n->name);
  }
  FabricHost Host() { return FabricHost{&runner_, &fs_, &node_, &clock_}; }
  void Alive(int pid, const std::string& node) {
    fs_.files["/proc/" + std::to_string(pid) + "/cmdline"] =
        ProcCmdline({kSupervisedAgent, "--node", node, "--listen", "198.19.0.1:7100"});
  }
  void Dies(int pid) { fs_.files.erase("/proc/" + std::to_string(pid) + "/cmdline"); }
  FabricState Saved() {
    auto saved = LoadFabricState(fs_, kDir);
    EXPECT_TRUE(saved.ok()) << saved.status().ToString();
    return saved.ok() ? *saved : FabricState{};
  }

  FakeProcessRunner runner_;
  FakeSysFs fs_;
  SteppingClock clock_;
  FakeNodeSystem node_;
  FabricState state_;
};

TEST_F(AgentSupervisorTest, LeavesLiveAgentsAlone) {
  AgentSupervisor supervisor(state_, Host());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(supervisor.Tick().ok());
    clock_.Advance(milliseconds(100));
  }
  EXPECT_TRUE(node_.spawned.empty());
  EXPECT_EQ(node_.replaced, 0);
}

TEST_F(AgentSupervisorTest, StartsADeadAgentAgainAfterTheDelayAsUpDidAndRecordsIt) {
  AgentSupervisor supervisor(state_, Host(), {.restart_delay = milliseconds(500)});
  Dies(101);
  ASSERT_TRUE(supervisor.Tick().ok());  // seen dead at t=0
  EXPECT_TRUE(node_.spawned.empty()) << "not before RestartSec";
  clock_.Advance(milliseconds(400));
  ASSERT_TRUE(supervisor.Tick().ok());
  EXPECT_TRUE(node_.spawned.empty());
  clock_.Advance(milliseconds(100));
  node_.next_pid = 777;
  ASSERT_TRUE(supervisor.Tick().ok());
  ASSERT_EQ(node_.spawned.size(), 1u);
  const SpawnSpec& spec = node_.spawned[0];
  const FabricNode& n1 = state_.nodes[1];
  EXPECT_EQ(spec.argv, AgentArgv(state_, n1)) << "the same command line as `up`'s";
  EXPECT_EQ(spec.netns_path, n1.NetnsPath());
  EXPECT_EQ(spec.uts_path, n1.uts_path);
  EXPECT_EQ(spec.tmpdir, n1.tmpdir);
  EXPECT_EQ(spec.log_path, n1.agent_log);
  // fabric.json says where it is now and how often it was restarted.
  FabricState saved = Saved();
  EXPECT_EQ(saved.nodes[1].agent_pid, 777);
  EXPECT_EQ(saved.nodes[1].agent_restarts, 1);
  EXPECT_EQ(saved.nodes[0].agent_pid, 100);
  EXPECT_EQ(saved.nodes[0].agent_restarts, 0);
  EXPECT_EQ(saved.supervisor_pid, 50);
  // Its log says why a new life began.
  EXPECT_THAT(node_.appended[n1.agent_log], HasSubstr("pid 101 is gone; starting it again in"));
  EXPECT_THAT(node_.appended[n1.agent_log], HasSubstr("started again, pid 777 (restart 1)"));
  // The new agent lives: nothing more happens.
  Alive(777, "n1");
  clock_.Advance(seconds(5));
  ASSERT_TRUE(supervisor.Tick().ok());
  EXPECT_EQ(node_.spawned.size(), 1u);
}

TEST_F(AgentSupervisorTest, NeverTakesARecycledPidForTheAgent) {
  AgentSupervisor supervisor(state_, Host(), {.restart_delay = milliseconds(0)});
  fs_.files["/proc/100/cmdline"] = ProcCmdline({"/usr/sbin/sshd", "-D"});
  ASSERT_TRUE(supervisor.Tick().ok());
  ASSERT_EQ(node_.spawned.size(), 1u);
  EXPECT_THAT(node_.spawned[0].argv, ::testing::Contains("n0"));
}

TEST_F(AgentSupervisorTest, SwitchAgentsAreSupervisedToo) {
  AgentSupervisor supervisor(state_, Host(), {.restart_delay = milliseconds(0)});
  Dies(102);
  ASSERT_TRUE(supervisor.Tick().ok());
  ASSERT_EQ(node_.spawned.size(), 1u);
  EXPECT_EQ(node_.spawned[0].netns_path, state_.switches[0].agent.NetnsPath());
  EXPECT_EQ(Saved().switches[0].agent.agent_restarts, 1);
}

TEST_F(AgentSupervisorTest, AtTheStartLimitGivesUpAndSweepsTheJournalOnce) {
  AgentSupervisor supervisor(state_, Host(),
                             {.restart_delay = milliseconds(100),
                              .start_limit_burst = 2,
                              .start_limit_interval = seconds(60)});
  Dies(100);
  // Every new life dies at once: an agent that cannot start.
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(supervisor.Tick().ok());
    clock_.Advance(milliseconds(100));
  }
  const FabricNode& n0 = state_.nodes[0];
  ASSERT_EQ(node_.spawned.size(), 3u) << "two restarts, then the journal sweep";
  EXPECT_EQ(node_.spawned[0].argv, AgentArgv(state_, n0));
  EXPECT_EQ(node_.spawned[1].argv, AgentArgv(state_, n0));
  EXPECT_EQ(node_.spawned[2].argv,
            (std::vector<std::string>{kSupervisedAgent, "--node", "n0", "--state-dir", n0.state_dir,
                                      "--revert-all"}));
  EXPECT_EQ(node_.spawned[2].netns_path, n0.NetnsPath());
  EXPECT_THAT(supervisor.GaveUp(), ElementsAre("n0"));
  EXPECT_THAT(node_.appended[n0.agent_log], HasSubstr("giving up on it"));
  EXPECT_EQ(Saved().nodes[0].agent_restarts, 2);
}

TEST_F(AgentSupervisorTest, AStartThatFailsCountsAndIsTriedAgain) {
  AgentSupervisor supervisor(state_, Host(), {.restart_delay = milliseconds(100)});
  Dies(100);
  node_.fail_spawn_at = 0;
  ASSERT_TRUE(supervisor.Tick().ok());  // seen dead
  clock_.Advance(milliseconds(100));
  ASSERT_TRUE(supervisor.Tick().ok());  // the start fails
  EXPECT_TRUE(node_.spawned.empty());
  node_.fail_spawn_at = -1;
  clock_.Advance(milliseconds(100));
  ASSERT_TRUE(supervisor.Tick().ok());  // tried again after RestartSec
  ASSERT_EQ(node_.spawned.size(), 1u);
  EXPECT_THAT(node_.appended[state_.nodes[0].agent_log], HasSubstr("could not be started"));
  EXPECT_EQ(Saved().nodes[0].agent_restarts, 1);
}

TEST(SupervisorAlive, NamesOnlyThisFabricsSupervisor) {
  FakeSysFs fs;
  fs.files["/proc/50/cmdline"] = CmdlineOf(SupervisorArgv("/usr/bin/fdrill", kDir));
  fs.files["/proc/51/cmdline"] =
      CmdlineOf(SupervisorArgv("/usr/bin/fdrill", "/run/fdrill/fabric-e2e"));
  fs.files["/proc/52/cmdline"] = ProcCmdline({"/usr/sbin/sshd", "-D"});
  EXPECT_TRUE(SupervisorAlive(fs, kDir, 50));
  EXPECT_FALSE(SupervisorAlive(fs, kDir, 51));
  EXPECT_FALSE(SupervisorAlive(fs, kDir, 52));
  EXPECT_FALSE(SupervisorAlive(fs, kDir, 53));
  EXPECT_FALSE(SupervisorAlive(fs, kDir, 0));
}

class SuperviseTest : public AgentSupervisorTest {};

TEST_F(SuperviseTest, RefusesAFabricThatDoesNotNameIt) {
  ASSERT_TRUE(SaveFabricState(fs_, state_).ok());  // names pid 50
  SuperviseOptions options{.state_dir = kDir, .self_pid = 60, .claim_timeout = seconds(2)};
  Status s = Supervise(options, Host());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("never handed"));
  EXPECT_TRUE(node_.spawned.empty());
}

TEST_F(SuperviseTest, RestartsUntilFabricJsonIsGone) {
  ASSERT_TRUE(SaveFabricState(fs_, state_).ok());
  Dies(101);
  node_.on_spawn = [&](const SpawnSpec&) { Alive(node_.next_pid, "n1"); };  // it stays up
  int sleeps = 0;
  node_.on_sleep = [&] {
    if (++sleeps == 30) fs_.files.erase(std::string(kDir) + "/fabric.json");  // fabric down
  };
  SuperviseOptions options{.state_dir = kDir, .self_pid = 50};
  std::string ended;
  ASSERT_TRUE(Supervise(options, Host(), &ended).ok());
  EXPECT_THAT(ended, HasSubstr("is gone"));
  ASSERT_EQ(node_.spawned.size(), 1u);
  EXPECT_EQ(node_.spawned[0].netns_path, state_.nodes[1].NetnsPath());
}

TEST_F(SuperviseTest, StopsWhenAnotherSupervisorIsNamed) {
  ASSERT_TRUE(SaveFabricState(fs_, state_).ok());
  int sleeps = 0;
  node_.on_sleep = [&] {
    if (++sleeps == 3) {
      FabricState replaced = state_;
      replaced.supervisor_pid = 99;
      ASSERT_TRUE(SaveFabricState(fs_, replaced).ok());
    }
  };
  std::string ended;
  ASSERT_TRUE(Supervise({.state_dir = kDir, .self_pid = 50}, Host(), &ended).ok());
  EXPECT_THAT(ended, HasSubstr("names supervisor pid 99"));
}

TEST_F(SuperviseTest, StopsOnItsSignal) {
  ASSERT_TRUE(SaveFabricState(fs_, state_).ok());
  std::atomic<bool> stop{false};
  node_.on_sleep = [&] { stop = true; };
  std::string ended;
  ASSERT_TRUE(Supervise({.state_dir = kDir, .self_pid = 50, .stop = &stop}, Host(), &ended).ok());
  EXPECT_EQ(ended, "stopped by a signal");
}

}  // namespace
}  // namespace fdrill

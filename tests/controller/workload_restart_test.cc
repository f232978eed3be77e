// WorkloadSupervisor's restart policy (workload_restart.cc) against fake
// agents, driven turn by turn with the timeline's time given, not waited
// for: a failed job's remains killed on every node, a relaunch scheduled
// after a backoff that doubles, the same argv relaunched when due, the
// reason the drill ends once restarts are exhausted (or there are none), a
// clean finish, when silence counts as a hang, and a relaunch the agent
// refuses failing the drill.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/host/host.h"
#include "common/wire/protocol.h"
#include "harness/controller/workload_supervisor.h"
#include "tests/controller/drill_fixture.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class NoJobPrograms final : public ProcessRunner {
 public:
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration) override {
    return ProgramMissing(argv[0]);
  }
};

std::string Train(const std::string& restart) {
  return R"(name: t
fabric: {emulated: {nodes: 2}}
workload:
  mode: train
  steps: 1000
  checkpoint_every: 10
  size: 4K
  restart: )" +
         restart + R"(
phases:
  - {name: baseline, duration: 10s}
  - {name: end, duration: 10s}
)";
}

class WorkloadRestartTest : public controller_test::DrillFixture {
 protected:
  WorkloadRestartTest() : DrillFixture("fdrill-restart-", {"n0", "n1"}) {}
  // The scenario's supervisor with its live view, launched (Begin).
  WorkloadSupervisor& Launched(const std::string& yaml) {
    auto s = ParseScenario(yaml, "drill.yaml");
    EXPECT_TRUE(s.ok()) << s.status().message();
    s_ = s.ok() ? std::move(s).value() : Scenario{};
    state_.monitors.push_back(std::make_unique<LiveMonitor>(2, StopSpec{}, 3));
    workloads_.push_back(std::make_unique<WorkloadSupervisor>(ctx_, s_.Workloads()[0], 0, runner_));
    WorkloadSupervisor& w = *workloads_.front();
    w.set_run_id("t");
    EXPECT_TRUE(w.Begin().ok());
    return w;
  }
  // One turn of the timeline at `now`.
  std::optional<std::string> Turn(WorkloadSupervisor& w, Duration now) {
    WorkloadSupervisor::Health h;
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      h = w.HealthLocked(now);
    }
    return w.Supervise(now, h);
  }
  // Launches: workload_start calls that carry the job's argv.
  std::vector<Json> Launches() const {
    std::vector<Json> out;
    for (const auto& b : agents_.BatchesOf(proto::kWorkloadStart)) {
      for (const auto& r : b.requests) {
        if (r.body.contains(proto::key::kArgv)) out.push_back(r.body[proto::key::kArgv]);
      }
    }
    return out;
  }
  std::vector<Json> EventsOf(const std::string& type) const {
    std::vector<Json> out;
    for (const Json& e : Events()) {
      if (e.value("type", "") == type) out.push_back(e);
    }
    return out;
  }
  // Rank 0 and 1 of ITER, ended at `end` on the timeline.
  void Iteration(WorkloadSupervisor& w, int64_t iter, Duration end) {
    Json records = Json::array();
    for (int rank = 0; rank < 2; ++rank) {
      records.push_back({{"rank", rank},
                         {"iter", iter},
                         {"wall_ns", end.count()},
                         {"time_ms", 1.0},
                         {"algbw_gbps", 1.0},
                         {"busbw_gbps", 1.0}});
    }
    w.OnMetrics(agents_.Facts("n0"), records);
  }

  NoJobPrograms runner_;
};

// A job that exits non-zero: the agents kill what is left on every node,
// the relaunch is scheduled after the backoff and launched with the same
// argv when due, not before.
TEST_F(WorkloadRestartTest, AFailedJobIsKilledEverywhereAndRelaunchedWhenDue) {
  WorkloadSupervisor& w = Launched(Train("{max_restarts: 2, backoff: 1s}"));
  ASSERT_EQ(Launches().size(), 1u);
  w.OnExit("n0", 137, "rank 1: killed\n");
  EXPECT_EQ(Turn(w, seconds(3)), std::nullopt);
  const auto stops = agents_.BatchesOf(proto::kWorkloadStop);
  ASSERT_EQ(stops.size(), 2u);
  EXPECT_EQ(stops[0].requests[0].name, "n0");
  EXPECT_EQ(stops[1].requests[0].name, "n1");
  for (const auto& s : stops) EXPECT_TRUE(s.requests[0].body.value(proto::key::kKill, false));
  EXPECT_EQ(EventsOf("workload_failed").at(0)["exit_code"], 137);
  const Json scheduled = EventsOf("workload_relaunch_scheduled").at(0);
  EXPECT_EQ(scheduled["restart"], 1);
  EXPECT_EQ(scheduled["in_s"], 1.0);

  EXPECT_EQ(Turn(w, milliseconds(3900)), std::nullopt);
  EXPECT_EQ(Launches().size(), 1u);  // not yet due
  EXPECT_EQ(Turn(w, seconds(4)), std::nullopt);
  const std::vector<Json> launches = Launches();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[1], launches[0]);
  EXPECT_EQ(w.restarts_locked(), 1);
  EXPECT_EQ(EventsOf("workload_start").back()["attempt"], 1);
}

// Each failure waits twice as long as the one before; once max_restarts
// relaunches failed too, the drill ends, saying how often and why.
TEST_F(WorkloadRestartTest, TheBackoffDoublesUntilRestartsAreExhausted) {
  WorkloadSupervisor& w = Launched(Train("{max_restarts: 2, backoff: 1s}"));
  w.OnExit("n0", 1, "");
  EXPECT_EQ(Turn(w, seconds(1)), std::nullopt);
  EXPECT_EQ(Turn(w, seconds(2)), std::nullopt);  // relaunched
  w.OnExit("n0", 1, "");
  EXPECT_EQ(Turn(w, seconds(3)), std::nullopt);
  EXPECT_EQ(Turn(w, seconds(5)), std::nullopt);  // relaunched again
  w.OnExit("n0", 1, "");
  EXPECT_EQ(Turn(w, seconds(6)),
            "the job failed 3 times (last: it exited with code 1); restarts exhausted "
            "(max_restarts 2)");
  const auto scheduled = EventsOf("workload_relaunch_scheduled");
  ASSERT_EQ(scheduled.size(), 2u);
  EXPECT_EQ(scheduled[0]["in_s"], 1.0);
  EXPECT_EQ(scheduled[1]["in_s"], 2.0);
  EXPECT_EQ(Launches().size(), 3u);
}

// Without restarts a failure ends the drill at once; a train job that
// exits 0 has finished.
TEST_F(WorkloadRestartTest, NoRestartsEndTheDrillAndACleanExitIsAFinish) {
  WorkloadSupervisor& w = Launched(Train("{max_restarts: 0}"));
  w.OnExit("n0", 137, "");
  EXPECT_EQ(Turn(w, seconds(1)), "the workload exited with code 137 during the drill");
  EXPECT_TRUE(EventsOf("workload_relaunch_scheduled").empty());

  workloads_.clear();
  state_.monitors.clear();
  WorkloadSupervisor& done = Launched(Train("{max_restarts: 2}"));
  done.OnExit("n0", 0, "steps_done: 1000\n");
  EXPECT_EQ(Turn(done, seconds(1)), "the job finished its 1000 steps");
}

// Silence past hang_timeout is a hang — with launch grace until the
// attempt's first iteration — and a hung job is stopped and relaunched
// like a failed one.
TEST_F(WorkloadRestartTest, SilencePastHangTimeoutIsAHang) {
  WorkloadSupervisor& w = Launched(Train("{max_restarts: 1, backoff: 1s, hang_timeout: 5s}"));
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    // Not yet reported: hang_timeout plus the launch grace.
    EXPECT_FALSE(w.HealthLocked(seconds(14)).hang);
    EXPECT_TRUE(w.HealthLocked(seconds(16)).hang);
  }
  Iteration(w, 1, seconds(20));
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    EXPECT_FALSE(w.HealthLocked(seconds(24)).hang);
    const auto hung = w.HealthLocked(seconds(26)).hang;
    ASSERT_TRUE(hung);
    EXPECT_EQ(*hung, "no iteration completed for 6.0 s (hang_timeout 5s)");
  }
  EXPECT_EQ(Turn(w, seconds(26)), std::nullopt);
  const auto failed = EventsOf("workload_failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["cause"], "hang");
  EXPECT_EQ(agents_.BatchesOf(proto::kWorkloadStop).size(), 2u);
  EXPECT_EQ(EventsOf("workload_relaunch_scheduled").at(0)["last_step"], 1);
}

// What the agents killed of the failed job is recorded: the launcher's
// exit, forced, and the ranks each node still had.
TEST_F(WorkloadRestartTest, WhatTheAgentsKilledIsRecorded) {
  agents_.answer = [](const std::string& name, const std::string& type,
                      const Json& body) -> Result<Json> {
    if (type == proto::kWorkloadStop && body.value(proto::key::kKill, false)) {
      if (name == "n0") return Json{{proto::key::kExitCode, 137}};
      return Json{{proto::key::kRanksKilled, 1}};
    }
    return Json{{"ok", true}};
  };
  WorkloadSupervisor& w = Launched(Train("{max_restarts: 1, backoff: 1s}"));
  w.OnExit("n0", 1, "");
  EXPECT_EQ(Turn(w, seconds(1)), std::nullopt);
  const auto killed = EventsOf("ranks_killed");
  ASSERT_EQ(killed.size(), 1u);
  EXPECT_EQ(killed[0]["node"], "n1");
  EXPECT_EQ(killed[0]["count"], 1);
  bool forced = false;
  for (const Json& e : EventsOf("workload_exit")) {
    forced |= e.value("forced", false) && e["node"] == "n0" && e["exit_code"] == 137;
  }
  EXPECT_TRUE(forced);
}

// A relaunch the agent refuses fails the drill, naming it.
TEST_F(WorkloadRestartTest, ARefusedRelaunchFailsTheDrill) {
  WorkloadSupervisor& w = Launched(Train("{max_restarts: 1, backoff: 1s}"));
  agents_.answer = [](const std::string&, const std::string& type,
                      const Json& body) -> Result<Json> {
    if (type == proto::kWorkloadStart && body.contains(proto::key::kArgv))
      return Status(FailedPrecondition("the panic latch is set"));
    return Json{{"ok", true}};
  };
  w.OnExit("n0", 1, "");
  EXPECT_EQ(Turn(w, seconds(1)), std::nullopt);
  EXPECT_EQ(Turn(w, seconds(2)), std::nullopt);
  EXPECT_TRUE(state_.failed);
  bool named = false;
  for (const Json& e : EventsOf("error")) {
    named |= e.value("message", "").find("relaunch: ") == 0 &&
             e.value("message", "").find("the panic latch is set") != std::string::npos;
  }
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace fdrill

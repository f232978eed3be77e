// A workload supervisor and the timeline walker together, against fake
// agents: the job's records come in as the agents would push them, and the
// test reads what the supervisor asked of the agents — launching, stopping
// a failed job, relaunching it — and what the walker did with a stop
// condition mid-fault. Real time, phases of a few hundred milliseconds; no
// fabric, no MPI.
#include "harness/controller/workload_supervisor.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/wire/protocol.h"
#include "fabric/fabric_state.h"
#include "harness/controller/agent_set.h"
#include "harness/controller/timeline_walker.h"
#include "tests/controller/drill_fixture.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;

class NoPrograms final : public ProcessRunner {
 public:
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration) override {
    return ProgramMissing(argv[0]);
  }
};

class WorkloadSupervisorTest : public controller_test::DrillFixture {
 protected:
  WorkloadSupervisorTest() : DrillFixture("fdrill-supervisor-", {"n0", "n1"}) {}
  void SetUp() override {
    DrillFixture::SetUp();
    opt_.bin_dir = "/usr/bin";
    auto fabric = PlanFabric(FabricLayout::Default(), 2, "/usr/bin/fdrill-agent");
    ASSERT_TRUE(fabric.ok()) << fabric.status().message();
    targets_ = DrillTargetsOfFabric(*fabric);
  }
  void TearDown() override {
    stop_pushing_ = true;
    if (pusher_.joinable()) pusher_.join();
    DrillFixture::TearDown();
  }

  // The scenario and its supervisor, the job launched (Begin).
  void Launch(const std::string& yaml) {
    auto s = ParseScenario(yaml, "drill.yaml");
    ASSERT_TRUE(s.ok()) << s.status().message();
    s_ = std::move(s).value();
    workloads_.clear();
    workloads_.push_back(std::make_unique<WorkloadSupervisor>(ctx_, s_.Workloads()[0], 0, runner_));
    WorkloadSupervisor& w = *workloads_.front();
    w.set_run_id("t");
    ASSERT_TRUE(w.Begin().ok());
  }
  // Its two ranks push an iteration each every 10 ms from FIRST_ITER (each
  // with a wrong element from WRONG_AT), until StopPushing or, at EXIT_AT,
  // n0's agent reports the launcher's exit.
  void Push(int64_t first_iter, std::optional<int64_t> wrong_at = std::nullopt,
            std::optional<int64_t> exit_at = std::nullopt) {
    pusher_ = std::thread([this, first_iter, wrong_at, exit_at] {
      WorkloadSupervisor& w = *workloads_.front();
      for (int64_t iter = first_iter; !stop_pushing_; ++iter) {
        if (exit_at && iter == *exit_at) {
          w.OnExit("n0", 137, "rank 1: killed\n");
          return;
        }
        Json records = Json::array();
        for (int rank = 0; rank < 2; ++rank) {
          records.push_back({{"rank", rank},
                             {"iter", iter},
                             {"wall_ns", clock_.WallNanos()},
                             {"time_ms", 5.0},
                             {"wait_ms", 0.1},
                             {"bytes", 4096},
                             {"algbw_gbps", 1.0},
                             {"busbw_gbps", 1.0},
                             {"wrong", wrong_at && iter >= *wrong_at ? 1 : 0}});
        }
        w.OnMetrics(agents_.Facts(rank_node_), records);
        std::this_thread::sleep_for(milliseconds(10));
      }
    });
  }
  void StopPushing() {
    stop_pushing_ = true;
    if (pusher_.joinable()) pusher_.join();
    stop_pushing_ = false;
  }
  std::vector<std::string> Types() const {
    std::vector<std::string> out;
    for (const Json& e : Events()) out.push_back(e["type"]);
    return out;
  }
  // The first event of TYPE (with KEY, when given); null when none.
  Json EventOf(const std::string& type, const std::string& key = "") const {
    for (const Json& e : Events()) {
      if (e.value("type", "") == type && (key.empty() || e.contains(key))) return e;
    }
    return nullptr;
  }
  // The argv of every workload_start call that launched the job.
  std::vector<Json> Launches() const {
    std::vector<Json> out;
    for (const auto& b : agents_.BatchesOf(proto::kWorkloadStart)) {
      for (const auto& r : b.requests) {
        if (r.body.contains(proto::key::kArgv)) out.push_back(r.body[proto::key::kArgv]);
      }
    }
    return out;
  }

  NoPrograms runner_;
  std::string rank_node_ = "n0";
  std::atomic<bool> stop_pushing_{false};
  std::thread pusher_;
};

constexpr char kTrain[] = R"(name: t
fabric: {emulated: {nodes: 2}}
workload:
  mode: train
  steps: 1000000
  checkpoint_every: 10
  size: 4K
  restart: {max_restarts: 1, backoff: 100ms}
phases:
  - {name: baseline, duration: 1500ms}
)";

// The job exits mid-drill (a killed rank): the supervisor has every agent
// kill what is left of it, schedules the relaunch after the backoff,
// launches the same argv again, and records where the relaunched job
// resumed; the drill goes on to the end of its timeline.
TEST_F(WorkloadSupervisorTest, AJobThatExitsIsStoppedEverywhereAndRelaunchedWithItsArgv) {
  Launch(kTrain);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(Launches().size(), 1u);
  // Every node's agent watches its run directory; n0's launches.
  const auto watch = agents_.BatchesOf(proto::kWorkloadStart).front();
  ASSERT_EQ(watch.requests.size(), 2u);
  EXPECT_EQ(watch.requests[0].name, "n0");
  EXPECT_EQ(watch.requests[1].name, "n1");
  EXPECT_TRUE(watch.requests[1].body.contains(proto::key::kMetricsDir));
  Push(0, std::nullopt, 40);  // 40 iterations, then the job exits 137
  std::thread resume([this] {
    while (Launches().size() < 2 && !stop_pushing_) std::this_thread::sleep_for(milliseconds(5));
    // The relaunched job resumes at the last checkpoint (step 30).
    StopPushing();
    Push(30);
  });
  TimelineWalker walker(ctx_, workloads_);
  walker.Walk();
  resume.join();
  StopPushing();

  EXPECT_FALSE(state_.failed);
  EXPECT_FALSE(walker.job_ended());
  const std::vector<Json> launches = Launches();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[1], launches[0]);
  // Between the two: the failed job's remains killed on both nodes.
  const auto stops = agents_.BatchesOf(proto::kWorkloadStop);
  ASSERT_GE(stops.size(), 2u);
  EXPECT_EQ(stops[0].requests[0].name, "n0");
  EXPECT_TRUE(stops[0].requests[0].body.value(proto::key::kKill, false));
  EXPECT_EQ(stops[1].requests[0].name, "n1");
  // In order: the exit, the failure, the relaunch scheduled, the second
  // launch (attempt 1), and the first record of the relaunched job.
  const std::vector<std::string> types = Types();
  std::vector<std::string> story;
  for (const std::string& t : types) {
    if (t == "workload_exit" || t == "workload_failed" || t == "workload_relaunch_scheduled" ||
        t == "workload_start" || t == "workload_restart")
      story.push_back(t);
  }
  EXPECT_EQ(story, (std::vector<std::string>{"workload_start", "workload_exit", "workload_failed",
                                             "workload_relaunch_scheduled", "workload_start",
                                             "workload_restart"}));
  EXPECT_EQ(EventOf("workload_start", "attempt").value("attempt", 0), 1);
  const Json resumed = EventOf("workload_restart");
  ASSERT_TRUE(resumed.is_object());
  EXPECT_EQ(resumed["resumed_step"], 30);
  EXPECT_EQ(workloads_.front()->restarts_locked(), 1);
}

// A stop condition met while a fault is in force (a data-check failure with
// max_wrong_elements: 0): the walk aborts with cause stop_condition, the
// fault is reverted there and then, and the drill is stopped, not failed.
TEST_F(WorkloadSupervisorTest, AStopConditionMidFaultRevertsItAndStopsTheDrill) {
  Launch(R"(name: t
fabric: {emulated: {nodes: 2}}
workload: {size: 4K}
phases:
  - {name: baseline, duration: 300ms}
  - name: cut
    duration: 5s
    faults:
      - {id: cap, kind: link_rate, node: n1, params: {interface: fab0, rate: 100mbit}}
  - {name: recovery, duration: 300ms}
safety: {stop: {max_wrong_elements: 0}}
)");
  ASSERT_FALSE(HasFatalFailure());
  std::atomic<bool> applied{false};
  agents_.before_answer = [&](const FakeAgentCalls::Batch& b) {
    if (b.type == proto::kApply) applied = true;
  };
  Push(0);
  std::thread corrupt([&] {
    while (!applied) std::this_thread::sleep_for(milliseconds(5));
    StopPushing();
    Push(1000, 1000);  // from here every record has a wrong element
  });
  const auto t0 = std::chrono::steady_clock::now();
  TimelineWalker walker(ctx_, workloads_);
  walker.Walk();
  corrupt.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  EXPECT_TRUE(walker.stopped());
  EXPECT_FALSE(state_.failed);
  const auto reverts = agents_.BatchesOf(proto::kRevert);
  ASSERT_EQ(reverts.size(), 1u);
  EXPECT_EQ(reverts[0].requests[0].name, "n1");
  EXPECT_TRUE(walker.InForceOn("n1").empty());
  EXPECT_EQ(EventOf("abort").value("cause", ""), "stop_condition");
}

}  // namespace
}  // namespace fdrill

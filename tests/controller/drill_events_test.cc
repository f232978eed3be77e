// DrillEvents: what each call writes to the run directory — nothing before
// Attach (connecting and checking write no run directory), then one
// events.jsonl line per call with the fields the report reads, counters
// whole first and then as deltas, the workload's log beside its exit, and
// metrics records through the agent's clock offset. A scratch run
// directory; no agents.
#include "harness/controller/drill_events.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/wire/protocol.h"
#include "tests/support/json_lines.h"
#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

class DrillEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("fdrill-events-");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    events_.Attach(nullptr);
    rec_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Attach() {
    auto rec = RunRecorder::Create(dir_ + "/run", clock_);
    ASSERT_TRUE(rec.ok()) << rec.status().message();
    rec_ = std::move(rec).value();
    events_.Attach(rec_.get());
  }
  std::vector<Json> Lines(const std::string& file = "events.jsonl") const {
    return ReadJsonLines(dir_ + "/run/" + file);
  }
  std::string Contents(const std::string& file) const {
    std::ifstream in(dir_ + "/run/" + file);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static FaultSpec Fault() {
    FaultSpec f;
    f.id = "cap";
    f.kind = "link_rate";
    f.node = "n1";
    f.params = {{"interface", "fab0"}, {"rate", "100mbit"}};
    return f;
  }

  std::string dir_;
  RealClock clock_;
  std::unique_ptr<RunRecorder> rec_;
  DrillEvents events_;
};

// Before the run directory exists every event is dropped and a file cannot
// be written: the error says why.
TEST_F(DrillEventsTest, NothingIsWrittenBeforeAttach) {
  EXPECT_FALSE(events_.attached());
  EXPECT_EQ(events_.dir(), "");
  events_.Error("n1", "lost the agent");
  events_.DrillStart("t");
  Status st = events_.WriteFile("plan.json", "{}");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "plan.json: the run directory does not exist yet");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/run"));
}

// Once attached, each call is one line in call order, with its type and
// fields.
TEST_F(DrillEventsTest, EachCallIsOneLineInOrder) {
  ASSERT_NO_FATAL_FAILURE(Attach());
  EXPECT_EQ(events_.dir(), dir_ + "/run");
  events_.DrillStart("t");
  events_.AgentConnected("n0", "198.19.0.1:7100", 2500000);
  events_.FaultApply(Fault(), "phase slow");
  events_.FaultApplied(Fault(), "fab0", true);
  events_.FaultRevert("cap", "n1", "phase end");
  events_.FaultReverted("cap", "n1", false);
  events_.AgentLost("n1", "connection lost", {"cap"}, 7);
  events_.DrillEnd("error");
  const std::vector<Json> lines = Lines();
  std::vector<std::string> types;
  for (const Json& l : lines) types.push_back(l["type"]);
  EXPECT_EQ(types, (std::vector<std::string>{"drill_start", "agent_connected", "fault_apply",
                                             "fault_applied", "fault_revert", "fault_reverted",
                                             "agent_lost", "drill_end"}));
  EXPECT_EQ(lines[1]["clock_offset_ms"], 2.5);
  EXPECT_EQ(lines[2]["target"], "fab0");  // its params' interface, before the agent says
  EXPECT_EQ(lines[2]["params"]["rate"], "100mbit");
  EXPECT_FALSE(lines[3].contains("scope"));  // written only when the fault has one
  EXPECT_EQ(lines[3]["verified"], true);
  EXPECT_EQ(lines[5]["verified"], false);
  EXPECT_EQ(lines[6]["faults_left"], Json::array({"cap"}));
  EXPECT_EQ(lines[7]["status"], "error");
  for (const Json& l : lines) EXPECT_TRUE(l.contains("t")) << l.dump();
}

// A node's first counters sample is written whole, later ones as the agent
// sent them (a delta); a delta for a node not yet written is written whole.
TEST_F(DrillEventsTest, CountersAreWholeFirstThenDeltas) {
  ASSERT_NO_FATAL_FAILURE(Attach());
  const Json whole = {{"fab0", {{"tx_bytes", 100}, {"rx_bytes", 50}}}};
  const Json delta = {{proto::key::kCounters, {{"fab0", {{"tx_bytes", 180}}}}},
                      {proto::key::kDelta, true}};
  events_.Counters("n0", whole, delta);
  events_.Counters("n0", whole, delta);
  events_.Counters("n1", whole, delta);
  const std::vector<Json> lines = Lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["counters"], whole);
  EXPECT_FALSE(lines[0].contains("delta"));
  EXPECT_EQ(lines[1]["counters"], delta[proto::key::kCounters]);
  EXPECT_EQ(lines[1]["delta"], true);
  EXPECT_EQ(lines[2]["node"], "n1");
  EXPECT_EQ(lines[2]["counters"], whole);
}

// ib_watch: the devices a node watches, or why it cannot; an agent that
// watches nothing records nothing.
TEST_F(DrillEventsTest, AnIbWatchRecordsItsDevicesOrItsError) {
  ASSERT_NO_FATAL_FAILURE(Attach());
  events_.IbWatch(
      "n0", Json{{proto::key::kWatching, true}, {proto::key::kDevices, Json::array({"mlx5_0"})}});
  events_.IbWatch("n1", Json{{proto::key::kWatching, false}});
  events_.IbWatch("n2", Result<Json>(Unavailable("no RDMA devices")));
  const std::vector<Json> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["node"], "n0");
  EXPECT_EQ(lines[0]["devices"], Json::array({"mlx5_0"}));
  EXPECT_EQ(lines[1]["node"], "n2");
  EXPECT_EQ(lines[1]["ib_error"], "no RDMA devices");
}

// An exit by itself writes its log beside it (a tenant's under its own
// name); an exit forced by the drill says so.
TEST_F(DrillEventsTest, AWorkloadsExitKeepsItsLog) {
  ASSERT_NO_FATAL_FAILURE(Attach());
  events_.WorkloadExited("n0", "", 137, "rank 1: killed\n");
  events_.WorkloadExited("n2", "b", 1, "tenant b failed\n");
  events_.WorkloadKilled("controller", -1);
  const std::vector<Json> lines = Lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["exit_code"], 137);
  EXPECT_FALSE(lines[0].contains("workload"));
  EXPECT_EQ(lines[1]["workload"], "b");
  EXPECT_EQ(lines[2]["forced"], true);
  EXPECT_EQ(Contents("workload.log"), "rank 1: killed\n");
  EXPECT_EQ(Contents("workload-b.log"), "tenant b failed\n");
  EXPECT_EQ(DrillEvents::LogName("b"), "workload-b.log");
}

// A digest check: intact when the two agree; the key and tolerance only
// when they are not the defaults.
TEST_F(DrillEventsTest, ADigestCheckSaysWhetherTheJobIsIntact) {
  ASSERT_NO_FATAL_FAILURE(Attach());
  events_.DigestCheck(100, "abc", "abc");
  events_.DigestCheck(100, "abc", "abd");
  events_.DigestCheck(100, "1.0001", "1.0", "loss", 0.01);
  events_.DigestMissing();
  const std::vector<Json> lines = Lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["intact"], true);
  EXPECT_FALSE(lines[0].contains("key"));
  EXPECT_EQ(lines[1]["intact"], false);
  EXPECT_EQ(lines[2]["key"], "loss");
  EXPECT_EQ(lines[2]["tolerance"], 0.01);
  EXPECT_EQ(lines[2]["intact"], true);
  EXPECT_TRUE(lines[3]["digest"].is_null());
}

// The restarted agent's sweep is placed on the run's clock (at_s) from the
// controller wall time it is given.
TEST_F(DrillEventsTest, ASweepIsPlacedOnTheRunsClock) {
  ASSERT_NO_FATAL_FAILURE(Attach());
  const int64_t wall = clock_.WallNanos() + 2000000000;  // 2 s or more after it began
  events_.FaultsSwept("n1", {"cap", "loss"}, wall);
  const Json line = Lines().front();
  EXPECT_EQ(line["ids"], Json::array({"cap", "loss"}));
  EXPECT_EQ(line["wall_ns"], wall);
  EXPECT_DOUBLE_EQ(line["at_s"].get<double>(), rec_->TimeOfWall(wall));
  EXPECT_GE(line["at_s"].get<double>(), 2.0);
}

// Metrics records go to metrics.jsonl, each with its node and, for a
// tenant or a relaunch, the workload and attempt.
TEST_F(DrillEventsTest, MetricsRecordsCarryTheirNodeWorkloadAndAttempt) {
  ASSERT_NO_FATAL_FAILURE(Attach());
  const Json records =
      Json::array({{{"rank", 0}, {"iter", 3}, {"wall_ns", clock_.WallNanos()}, {"time_ms", 2.0}}});
  events_.Metrics("n0", "b", records, 0, 1);
  const std::vector<Json> lines = Lines("metrics.jsonl");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["node"], "n0");
  EXPECT_EQ(lines[0]["iter"], 3);
  EXPECT_EQ(lines[0]["workload"], "b");
  EXPECT_EQ(lines[0]["attempt"], 1);
  EXPECT_TRUE(Lines().empty());  // not an event
}

}  // namespace
}  // namespace fdrill

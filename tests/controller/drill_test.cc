// RunDrill end to end against in-process agents on loopback (tests/fakes/
// loopback_agent.h), dialled where its DrillTargets say — the emulated
// fabric's targets as DrillTargetsOfFabric would give them, without a
// fabric: the steps of drill.h in their order on every agent, the run
// directory's fixed files (scenario.yaml, inventory.json, plan.json, the
// mpirun hostfile from the targets' rail addresses), a fabric that does not
// fit or an agent that refuses a fault (nothing touched, no run directory),
// and an agent lost mid-fault that comes back having swept it. Plaintext,
// no root; phases of a few hundred milliseconds.
#include "harness/controller/drill.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/host/host.h"
#include "common/wire/protocol.h"
#include "tests/fakes/loopback_agent.h"
#include "tests/support/json_lines.h"
#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;

class NoRunnablePrograms final : public ProcessRunner {
 public:
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration) override {
    return ProgramMissing(argv[0]);
  }
};

constexpr char kLoopbackDrill[] = R"(name: t
fabric: {emulated: {nodes: 2}}
workload: {size: 4K}
phases:
  - {name: baseline, duration: 200ms}
  - name: cut
    duration: 300ms
    faults:
      - {id: cap, kind: link_rate, node: n1, params: {interface: fab0, rate: 100mbit}}
  - {name: recovery, duration: 200ms}
safety: {lease_ttl: 20s}
)";

std::string ReadRunFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class DrillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("fdrill-drill-");
    ASSERT_FALSE(dir_.empty());
    for (const char* name : {"n0", "n1"}) {
      agents_.push_back(std::make_unique<LoopbackAgent>(name));
      ASSERT_TRUE(agents_.back()->Listen().ok());
    }
    // As DrillTargetsOfFabric gives a flat 2-node fabric's.
    for (size_t i = 0; i < agents_.size(); ++i) {
      targets_.nodes.push_back({agents_[i]->node(), "127.0.0.1", agents_[i]->port(),
                                "/run/" + agents_[i]->node(), "198.18.0." + std::to_string(i + 1),
                                true});
    }
    targets_.rail_subnets = {"198.18.0.0/24"};
    targets_.shape.nodes = 2;
    // n0 launches the job: its ranks report once it is launched, and it
    // exits when asked to stop at the stop file.
    LoopbackAgent& n0 = *agents_[0];
    n0.set_answer([&n0](const Json& req) -> std::optional<Result<Json>> {
      const std::string type = RequestType(req);
      if (type == proto::kWorkloadStart && req.contains(proto::key::kArgv)) {
        Json records = Json::array();
        for (int rank = 0; rank < 2; ++rank) {
          records.push_back({{"rank", rank}, {"iter", 0}, {"wall_ns", 1}, {"time_ms", 1.0}});
        }
        n0.PushLater(proto::kMetrics, {{proto::key::kRecords, records}});
      } else if (type == proto::kWorkloadStop) {
        n0.PushLater(proto::kWorkloadExit, {{proto::key::kExitCode, 0}});
      }
      return n0.DefaultAnswer(req);
    });
    opt_.out_dir = dir_ + "/run";
    opt_.bin_dir = "/opt/fdrill/bin";
    opt_.insecure = true;
    opt_.runner = &runner_;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Status Run(const std::string& yaml) {
    auto s = ParseScenario(yaml, "drill.yaml");
    if (!s.ok()) return s.status();
    s_ = std::move(s).value();
    return RunDrill(s_, targets_, opt_);
  }
  std::vector<Json> Events() const { return ReadJsonLines(opt_.out_dir + "/events.jsonl"); }
  std::vector<std::string> EventTypes() const {
    std::vector<std::string> out;
    for (const Json& e : Events()) out.push_back(e.value("type", ""));
    return out;
  }
  Json EventOf(const std::string& type) const {
    for (const Json& e : Events()) {
      if (e.value("type", "") == type) return e;
    }
    return nullptr;
  }
  // What agent i was asked, in order, without the lease thread's renewals.
  std::vector<std::string> Asked(size_t i) const {
    std::vector<std::string> out;
    for (const Json& r : agents_[i]->Requests()) {
      if (!r.contains(proto::key::kRenewal)) out.push_back(RequestType(r));
    }
    return out;
  }

  std::string dir_;
  std::vector<std::unique_ptr<LoopbackAgent>> agents_;
  DrillTargets targets_;
  NoRunnablePrograms runner_;
  DrillOptions opt_;
  Scenario s_;
};

// The whole drill on two agents: each is leased, checked, snapshotted,
// watched, faulted and reverted, reverted whole and snapshotted again, and
// released, in that order; the run directory holds its fixed files and a
// drill that completed.
TEST_F(DrillTest, ADrillRunsItsStepsInOrderOnEveryAgent) {
  Status st = Run(kLoopbackDrill);
  ASSERT_TRUE(st.ok()) << st.message();

  EXPECT_EQ(Asked(1), (std::vector<std::string>{"hello", "lease", "check", "inventory", "snapshot",
                                                "ib_watch", "workload_start", "apply", "revert",
                                                "revert_all", "snapshot", "lease"}));
  // n0 holds no fault: it is not asked to check one, and it runs the job.
  EXPECT_EQ(Asked(0), (std::vector<std::string>{
                          "hello", "lease", "inventory", "snapshot", "ib_watch", "workload_start",
                          "workload_start", "workload_stop", "revert_all", "snapshot", "lease"}));
  const Json check = agents_[1]->RequestsOf(proto::kCheck).front();
  ASSERT_EQ(check[proto::key::kFaults].size(), 1u);
  EXPECT_EQ(check[proto::key::kFaults][0][proto::key::kFaultId], "cap");
  EXPECT_EQ(agents_[1]->RequestsOf(proto::kApply).front()[proto::key::kFaultId], "cap");
  EXPECT_EQ(agents_[1]->RequestsOf(proto::kLease).back()[proto::key::kTtlMs], 0);

  EXPECT_EQ(EventOf("drill_end").value("status", ""), "completed");
  EXPECT_EQ(EventOf("drill_start").value("name", ""), "t");
  const Json connected = EventOf("agent_connected");
  EXPECT_EQ(connected.value("address", ""), "127.0.0.1:" + std::to_string(agents_[0]->port()));
  EXPECT_TRUE(EventOf("residue")["items"].empty());
  EXPECT_EQ(ReadRunFile(opt_.out_dir + "/scenario.yaml"), kLoopbackDrill);
  const Json plan = Json::parse(ReadRunFile(opt_.out_dir + "/plan.json"));
  EXPECT_EQ(plan["nodes"], Json::array({"n0", "n1"}));
  EXPECT_EQ(plan["ranks"], 2);
  const Json inventory = Json::parse(ReadRunFile(opt_.out_dir + "/inventory.json"));
  ASSERT_EQ(inventory["nodes"].size(), 2u);
  EXPECT_EQ(inventory["nodes"][1]["node"], "n1");
  EXPECT_FALSE(inventory["nodes"][1].contains("id"));  // the reply's body, not its envelope
  EXPECT_FALSE(inventory.contains("switches"));        // the targets hold no cabling
}

// mpirun reaches the nodes by the targets' rail addresses and stays on the
// targets' rail subnets; the hostfile is in the run directory.
TEST_F(DrillTest, TheJobIsLaunchedOnTheTargetsRailAddresses) {
  Status st = Run(kLoopbackDrill);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(ReadRunFile(opt_.out_dir + "/hostfile"), "198.18.0.1 slots=1\n198.18.0.2 slots=1\n");
  Json argv;
  for (const Json& r : agents_[0]->RequestsOf(proto::kWorkloadStart)) {
    if (r.contains(proto::key::kArgv)) argv = r[proto::key::kArgv];
  }
  ASSERT_TRUE(argv.is_array());
  EXPECT_EQ(argv[0], "mpirun");
  const std::vector<std::string> words = argv.get<std::vector<std::string>>();
  const auto at = std::find(words.begin(), words.end(), "btl_tcp_if_include");
  ASSERT_NE(at, words.end());
  EXPECT_EQ(*(at + 1), "198.18.0.0/24");
  EXPECT_NE(std::find(words.begin(), words.end(), "/opt/fdrill/bin/fdrill-collective"),
            words.end());
  EXPECT_NE(std::find(words.begin(), words.end(), "/opt/fdrill/bin/fdrill fabric rsh"),
            words.end());
}

// The targets' cabling is what inventory.json's switches say.
TEST_F(DrillTest, TheTargetsCablingIsTheInventorysSwitches) {
  targets_.cabling = Json::array({{{"name", "sw"}, {"role", "leaf"}}});
  Status st = Run(kLoopbackDrill);
  ASSERT_TRUE(st.ok()) << st.message();
  const Json inventory = Json::parse(ReadRunFile(opt_.out_dir + "/inventory.json"));
  EXPECT_EQ(inventory["switches"], targets_.cabling);
}

// A drill whose fabric shape is not the one up is refused before any agent
// is dialled, naming both shapes and the command that builds the right one.
TEST_F(DrillTest, AFabricThatDoesNotFitIsRefusedBeforeAnythingIsDialled) {
  targets_.shape.rails = 2;
  Status st = Run(kLoopbackDrill);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("drill.yaml: the drill needs an emulated fabric of"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("fdrill fabric down && fdrill fabric up --nodes 2"),
            std::string::npos)
      << st.message();
  for (const auto& a : agents_) EXPECT_EQ(a->accepted(), 0);
  EXPECT_FALSE(std::filesystem::exists(opt_.out_dir));
}

// A flat drill runs on a larger flat fabric: its first nodes.
TEST_F(DrillTest, AFlatDrillRunsOnTheFirstNodesOfALargerFabric) {
  targets_.nodes.push_back({"n2", "127.0.0.1", 1, "/run/n2", "198.18.0.3", true});
  targets_.shape.nodes = 3;
  Status st = Run(kLoopbackDrill);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(EventOf("drill_end").value("status", ""), "completed");
}

// An agent that refuses a fault at check: the drill ends there with its
// reason, nothing was applied anywhere, no run directory was written, and
// the leases were released.
TEST_F(DrillTest, AFaultRefusedAtCheckEndsTheDrillWithNothingApplied) {
  LoopbackAgent& n1 = *agents_[1];
  n1.set_answer([&n1](const Json& req) -> std::optional<Result<Json>> {
    if (RequestType(req) == proto::kCheck) {
      return Status(FailedPrecondition("cap: link_rate: no interface fab0 on n1"));
    }
    return n1.DefaultAnswer(req);
  });
  Status st = Run(kLoopbackDrill);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "drill.yaml: cap: link_rate: no interface fab0 on n1");
  for (const auto& a : agents_) {
    EXPECT_TRUE(a->RequestsOf(proto::kApply).empty());
    EXPECT_TRUE(a->RequestsOf(proto::kWorkloadStart).empty());
    EXPECT_EQ(a->RequestsOf(proto::kLease).back()[proto::key::kTtlMs], 0) << a->node();
  }
  EXPECT_FALSE(std::filesystem::exists(opt_.out_dir));
}

// A node that gives no snapshot: nothing is applied, the drill ends with
// status error, and every agent still reverts everything.
TEST_F(DrillTest, ANodeWithoutASnapshotEndsTheDrillBeforeTheWorkload) {
  LoopbackAgent& n1 = *agents_[1];
  n1.set_answer([&n1](const Json& req) -> std::optional<Result<Json>> {
    if (RequestType(req) == proto::kSnapshot) return Status(Internal("tc: cannot list qdiscs"));
    return n1.DefaultAnswer(req);
  });
  Status st = Run(kLoopbackDrill);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(EventOf("drill_end").value("status", ""), "error");
  const Json error = EventOf("error");
  EXPECT_EQ(error.value("node", ""), "n1");
  EXPECT_EQ(error.value("message", ""), "snapshot: tc: cannot list qdiscs");
  for (const auto& a : agents_) {
    EXPECT_TRUE(a->RequestsOf(proto::kApply).empty());
    EXPECT_EQ(a->RequestsOf(proto::kRevertAll).size(), 1u) << a->node();
  }
}

// What a node's state still differs in after every agent reverted
// everything is residue, named by node and object.
TEST_F(DrillTest, WhatTheLastSnapshotDiffersInIsResidue) {
  LoopbackAgent& n1 = *agents_[1];
  std::atomic<int> snapshots{0};
  n1.set_answer([&](const Json& req) -> std::optional<Result<Json>> {
    if (RequestType(req) == proto::kSnapshot && ++snapshots == 2) {
      return Json{{proto::key::kLinks,
                   Json::array({{{proto::key::kName, "fab0"}, {proto::key::kAdminUp, false}}})}};
    }
    return n1.DefaultAnswer(req);
  });
  Status st = Run(kLoopbackDrill);
  ASSERT_TRUE(st.ok()) << st.message();
  const Json items = EventOf("residue")["items"];
  ASSERT_EQ(items.size(), 1u) << items.dump();
  EXPECT_EQ(items[0]["node"], "n1");
  EXPECT_EQ(items[0]["object"], "fab0 admin_up");
  EXPECT_EQ(items[0]["before"], true);
  EXPECT_EQ(items[0]["after"], false);
}

// The agent holding the fault goes away while it is in force: the drill
// fails, the loss names the fault left on it; the agent, back within the
// grace, is reconnected, and what its start-up sweep reverted is recorded
// and no longer reverted by the drill.
TEST_F(DrillTest, AnAgentLostMidFaultIsReconnectedAndItsSweepRecorded) {
  LoopbackAgent& n1 = *agents_[1];
  std::atomic<bool> restarted{false};
  n1.set_answer([&](const Json& req) -> std::optional<Result<Json>> {
    const std::string type = RequestType(req);
    if (type == proto::kApply && !restarted) {
      restarted = true;
      // The agent dies right after it applied, and its successor's
      // journal sweep reverts the fault.
      n1.RestartLater();
    }
    if (type == proto::kHello && restarted) {
      Json hello = **n1.DefaultAnswer(req);
      hello[proto::key::kStartSweep] = {
          {proto::key::kFaults, Json::array({{{proto::key::kFaultId, "cap"}}})},
          {proto::key::kWallNs, 1}};
      return hello;
    }
    return n1.DefaultAnswer(req);
  });
  Status st = Run(kLoopbackDrill);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(EventOf("drill_end").value("status", ""), "error");
  const Json lost = EventOf("agent_lost");
  ASSERT_TRUE(lost.is_object());
  EXPECT_EQ(lost.value("node", ""), "n1");
  EXPECT_EQ(lost["faults_left"], Json::array({"cap"}));
  EXPECT_EQ(EventOf("agent_reconnected").value("node", ""), "n1");
  EXPECT_EQ(EventOf("faults_swept")["ids"], Json::array({"cap"}));
  // Swept, so not reverted by the drill; revert_all still goes to the new agent.
  EXPECT_TRUE(n1.RequestsOf(proto::kRevert).empty());
  EXPECT_EQ(n1.RequestsOf(proto::kRevertAll).size(), 1u);
  const std::vector<std::string> types = EventTypes();
  const auto at = [&](const std::string& t) {
    return std::find(types.begin(), types.end(), t) - types.begin();
  };
  EXPECT_LT(at("fault_apply"), at("agent_lost"));
  EXPECT_LT(at("agent_lost"), at("agent_reconnected"));
  EXPECT_LT(at("faults_swept"), at("residue"));
}

}  // namespace
}  // namespace fdrill

// End-to-end on a real 4-node emulated fabric (DrillE2E, in
// tests/e2e/drill_e2e.h): faults that touch processes and packets, through
// whole drills. rank_pause, cpu_hog and mem_pressure show in the job and
// leave no process or cgroup; link_loss and link_partition slow it and
// leave no iptables rule; rank_kill ends it and the drill fails with the
// time to failure; a stop condition aborts the drill and reverts
// everything.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <system_error>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/e2e/drill_e2e.h"
#include "tests/support/json_lines.h"

namespace fdrill {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

using e2e::DrillE2E;
using e2e::Fdrill;
using e2e::ReadJson;
using e2e::Sh;

// rank_pause (hung rank, straggler) and cpu_hog: none touches the network,
// each shows in the job's iteration times; mem_pressure holds 1 GiB; and
// afterwards every rank runs and no fdrill-burn process or cgroup is left.
TEST_F(DrillE2E, RankPauseStragglerAndCpuHogShowAndLeaveNothing) {
  std::string before = FabricLinks();
  fs::path out = work_ / "rps";
  auto run = RunDrill("rank-pause-straggler", out, 180);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  json s = ReadJson(out / "summary.json");
  EXPECT_EQ(s["verdict"], "pass") << s.dump(2);
  ASSERT_EQ(s["faults"].size(), 4u) << s.dump(2);
  std::map<std::string, json> by_id;
  for (const auto& f : s["faults"]) by_id[f["id"]] = f;
  for (const auto& [id, f] : by_id) {
    ASSERT_TRUE(f["slowdown"].is_number()) << f.dump();
    ASSERT_TRUE(f["time_to_recover_s"].is_number()) << f.dump();
  }
  // A 3 s stop stalls every rank for about 3 s.
  EXPECT_GE(by_id["hung-rank"]["slowdown"].get<double>(), 5.0) << by_id["hung-rank"].dump();
  EXPECT_GE(by_id["hung-rank"]["stall_ms"].get<double>(), 2500.0) << by_id["hung-rank"].dump();
  // A straggler stopped 50 ms of every 200 ms slows only the iterations
  // its stops land on, so the median-based slowdown sits anywhere from 1.01
  // to 1.3 run to run (1.01 measured in a fresh-machine run): what must
  // hold is that fdrill names it, from its CPU time and its peers' waits.
  ASSERT_TRUE(by_id["straggler"]["localisation"].is_object()) << by_id["straggler"].dump();
  EXPECT_EQ(by_id["straggler"]["localisation"]["element"], "rank 2 (n2)")
      << by_id["straggler"].dump();
  EXPECT_GE(by_id["cpu-hog"]["slowdown"].get<double>(), 1.1) << by_id["cpu-hog"].dump();
  // Issue 17: each fault names what the agent resolved it to, not "".
  EXPECT_THAT(by_id["hung-rank"]["target"].get<std::string>(),
              ::testing::MatchesRegex("rank [0-9]+ \\(pid [0-9]+\\)"));
  EXPECT_THAT(by_id["straggler"]["target"].get<std::string>(), ::testing::StartsWith("rank"));
  EXPECT_EQ(by_id["cpu-hog"]["target"], "node");
  // 1 GiB held resident on n0 (Apply returns once it is): applied, verified
  // and gone afterwards; on a 24 GiB host it need not slow the job.
  EXPECT_FALSE(by_id["mem-pressure"]["reverted_at_s"].is_null()) << by_id["mem-pressure"].dump();
  EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
  EXPECT_TRUE(s["rollback"]["data_intact"].get<bool>());
  EXPECT_EQ(FabricLinks(), before);
  EXPECT_EQ(ProcessesInFabric({"fdrill-collective", "fdrill-burn"}), 0)
      << "a rank or fdrill-burn outlived the drill";
}

// link_loss and link_partition through whole drills (scenarios/): each slows
// the job measurably, the job recovers, and no FDRILL- iptables rule or chain
// is left (the agents' snapshot lists them; residue compares).
TEST_F(DrillE2E, LinkLossAndPartitionSlowTheJobAndLeaveNoRule) {
  for (const char* name : {"link-loss", "partition"}) {
    SCOPED_TRACE(name);
    fs::path out = work_ / name;
    auto run = RunDrill(name, out, 120, "0.5");  // half length (issue 55): holds there
    EXPECT_EQ(run.exit_code, 0) << run.err;
    json s = ReadJson(out / "summary.json");
    EXPECT_EQ(s["verdict"], "pass") << s.dump(2);
    ASSERT_EQ(s["faults"].size(), 1u) << s.dump(2);
    const json& f = s["faults"][0];
    ASSERT_TRUE(f["slowdown"].is_number()) << f.dump();
    EXPECT_GE(f["slowdown"].get<double>(), 1.5) << f.dump();
    ASSERT_TRUE(f["time_to_recover_s"].is_number()) << f.dump();
    EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
    for (int i = 0; i < 4; ++i) {
      std::string rules =
          Sh({"ip", "netns", "exec", Netns("n" + std::to_string(i)), "iptables-save"});
      EXPECT_EQ(rules.find("FDRILL-"), std::string::npos) << rules;
    }
  }
}

// rank_kill: Open MPI aborts the job a few seconds after a rank dies; the
// drill stops there, reverts, and fails (exit 1) with the time from the
// kill to the job's failure — an outcome, not an error of the harness.
TEST_F(DrillE2E, RankKillEndsTheJobAndTheDrillFailsWithTheTimeToFailure) {
  fs::path scenario = work_ / "rank-kill.yaml";
  std::ofstream(scenario)
      << "name: rank-kill\n"
         "fabric: {emulated: {nodes: 4}}\n"
         "workload: {op: all_reduce, dtype: float32, size: 1M, ranks_per_node: 1, backend: mpi}\n"
         "phases:\n"
         "  - {name: baseline, duration: 6s}\n"
         "  - name: crash\n"
         "    duration: 20s\n"
         "    faults:\n"
         "      - {id: crash, kind: rank_kill, node: n2, params: {rank: 2}}\n"
         "  - {name: after, duration: 5s}\n"
         "expect: {no_residue: true}\n";
  fs::path out = work_ / "rk";
  auto run = Fdrill({"run", scenario.string(), "--out", out.string()}, 120);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  json s = ReadJson(out / "summary.json");
  EXPECT_EQ(s["verdict"], "fail") << s.dump(2);
  ASSERT_EQ(s["faults"].size(), 1u);
  const json& f = s["faults"][0];
  ASSERT_TRUE(f["job_failed_after_s"].is_number()) << f.dump();
  EXPECT_LT(f["job_failed_after_s"].get<double>(), 15.0) << f.dump();
  bool job_expectation = false;
  for (const auto& e : s["expectations"]) {
    if (e["name"] == "job_completed") job_expectation = !e["pass"].get<bool>();
  }
  EXPECT_TRUE(job_expectation) << s["expectations"].dump();
  EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
  EXPECT_EQ(ProcessesInFabric({"fdrill-collective", "fdrill-burn"}), 0)
      << "a rank outlived the aborted job";
}

// A stop condition met mid-fault ends the drill at once: every fault is
// reverted, the residue is empty, and the verdict is fail with the reason.
TEST_F(DrillE2E, AStopConditionAbortsRevertsEverythingAndFails) {
  const std::string before = FabricLinks();
  fs::path scenario = work_ / "stop.yaml";
  std::ofstream(scenario)
      << R"(# a link down longer than the stop condition allows an iteration to take
name: stop
fabric: {emulated: {nodes: 4}}
workload: {size: 1M}
phases:
  - {name: baseline, duration: 5s}
  - name: outage
    duration: 20s
    faults:
      - {id: outage, kind: link_down, node: n2, params: {interface: fab0}}
  - {name: recovery, duration: 5s}
safety:
  stop: {max_iteration_time: 2s}
)";
  fs::path out = work_ / "stop";
  const auto t0 = std::chrono::steady_clock::now();
  auto run = Fdrill({"run", scenario.string(), "--out", out.string()}, 120);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_LT(took, 25.0);  // the timeline is 30 s; the stop comes ~2 s into the outage
  json s = ReadJson(out / "summary.json");
  EXPECT_EQ(s["verdict"], "fail");
  ASSERT_TRUE(s["stopped"].is_string()) << s.dump(2);
  EXPECT_NE(s["stopped"].get<std::string>().find("stop condition max_iteration_time"),
            std::string::npos)
      << s["stopped"];
  EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
  EXPECT_EQ(FabricLinks(), before);
  // The revert is journalled before the abort, with the stop as its reason.
  bool reverted = false, aborted = false;
  for (const json& e : ReadJsonLines(out / "events.jsonl")) {
    if (e["type"] == "fault_revert" && e["id"] == "outage") {
      EXPECT_FALSE(aborted);
      EXPECT_NE(e.value("reason", "").find("stop condition"), std::string::npos) << e.dump();
      reverted = true;
    }
    if (e["type"] == "abort") {
      EXPECT_EQ(e["cause"], "stop_condition");
      aborted = true;
    }
  }
  EXPECT_TRUE(reverted && aborted);
}

}  // namespace
}  // namespace fdrill

// End-to-end: `fdrill fabric up`, `fdrill run`, and what the run directory
// says, on a real 4-node emulated fabric (DrillE2E, tests/e2e/drill_e2e.h):
// the quickstart's numbers, overlapping faults each named from their own
// evidence, a link degraded by hand found as an anomaly, two campaigns
// compared across a real configuration change, the library's other drills,
// and a seeded sample of bench/localisation.sh. The faults' own effects are
// in drill_faults_e2e_test.cc, the job's failures in drill_jobs_e2e_test.cc,
// refusals in drill_refusals_e2e_test.cc.
#include "tests/e2e/drill_e2e.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/host/real_process_runner.h"
#include "tests/support/json_lines.h"

namespace fdrill {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

using e2e::DrillE2E;
using e2e::Fdrill;
using e2e::ReadJson;
using e2e::Sh;

TEST_F(DrillE2E, QuickstartMeasuresSlowdownRecoveryAndLeavesNoResidue) {
  std::string before = FabricLinks();
  fs::path out = work_ / "run";
  auto run = RunDrill("quickstart", out, 240);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // Issue 49: while n2's link is down the progress line reads the stall (an
  // iteration in progress counts by its age), where it read ~1x from the
  // iterations that had finished.
  {
    const std::regex flap_line(R"(\] flap \| busbw [^ ]+ GB/s = ([0-9.]+)x baseline)");
    std::optional<double> lowest;
    for (auto it = std::sregex_iterator(run.err.begin(), run.err.end(), flap_line);
         it != std::sregex_iterator(); ++it) {
      const double x = std::stod((*it)[1].str());
      lowest = std::min(lowest.value_or(x), x);
    }
    ASSERT_TRUE(lowest.has_value()) << run.err;
    EXPECT_LE(*lowest, 0.5) << run.err;
    std::printf("[ measured ] quickstart's progress line while n2 fab0 was down: %.2fx baseline\n",
                *lowest);
  }
  for (const char* f : {"scenario.yaml", "events.jsonl", "metrics.jsonl", "summary.json",
                        "report.md", "plan.json"}) {
    EXPECT_TRUE(fs::exists(out / f)) << f;
  }
  json s = ReadJson(out / "summary.json");
  EXPECT_EQ(s["verdict"], "pass") << s.dump(2);
  ASSERT_EQ(s["faults"].size(), 2u) << s.dump(2);
  for (const auto& f : s["faults"]) {
    ASSERT_FALSE(f["time_to_recover_s"].is_null()) << f.dump();
    EXPECT_LT(f["time_to_recover_s"].get<double>(), 10.0) << f.dump();
    ASSERT_FALSE(f["slowdown"].is_null()) << f.dump();
    if (f["kind"] == "link_rate") {
      EXPECT_GE(f["slowdown"].get<double>(), 3.0) << f.dump();
    }
    // Where it hurt: the faulted node's fab0 (n1's shaper, n2's carrier),
    // named live too.
    ASSERT_TRUE(f["localisation"].is_object()) << f.dump();
    EXPECT_EQ(f["localisation"]["element"], "link " + f["node"].get<std::string>() + " fab0")
        << f.dump();
    ASSERT_FALSE(f["time_to_localise_s"].is_null()) << f.dump();
    EXPECT_LT(f["time_to_localise_s"].get<double>(), 5.0) << f.dump();
  }
  EXPECT_TRUE(s["anomalies"].empty()) << s["anomalies"].dump();
  for (const auto& c : s["counters"]) EXPECT_GE(c["delta"].get<double>(), 0) << c.dump();
  for (const char* part :
       {"<h2>Where it hurt</h2>", "data-link=\"n1 fab0\"", "class=\"chart heatmap\""}) {
    std::ifstream html(out / "report.html");
    const std::string text((std::istreambuf_iterator<char>(html)),
                           std::istreambuf_iterator<char>());
    EXPECT_NE(text.find(part), std::string::npos) << part;
  }
  EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
  EXPECT_TRUE(s["rollback"]["data_intact"].get<bool>());
  EXPECT_EQ(s["phases"].size(), 5u);
  EXPECT_EQ(FabricLinks(), before);
  const std::vector<json> metrics = ReadJsonLines(out / "metrics.jsonl");
  int wrong = 0;
  for (const json& m : metrics) wrong += m["wrong"].get<int>();
  EXPECT_GT(metrics.size(), 400u);
  EXPECT_EQ(wrong, 0);
}

// Issue 49: two faults of different kinds in force together (a capped link
// and a 20 % straggler), first at once and then staggered. Each is named
// from its own evidence (before, both took the link: one culprit and the
// same numbers for both, the lost GPU·s counted twice), the staggered ones
// measured over their seconds alone, and the job's lost GPU·s summed once.
TEST_F(DrillE2E, OverlappingFaultsAreEachNamedFromTheirOwnEvidenceAndCountedOnce) {
  const std::string before = FabricLinks();
  fs::path out = work_ / "overlap";
  auto run = RunDrill("overlapping-faults", out, 180);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  json s = ReadJson(out / "summary.json");
  EXPECT_EQ(s["verdict"], "pass") << s["errors"].dump(2);
  ASSERT_EQ(s["faults"].size(), 4u) << s["faults"].dump(2);
  std::map<std::string, json> by_id;
  for (const auto& f : s["faults"]) by_id[f["id"]] = f;
  for (const char* id : {"capped-link", "capped-link-2"}) {
    ASSERT_TRUE(by_id[id]["localisation"].is_object()) << by_id[id].dump(2);
    EXPECT_EQ(by_id[id]["localisation"]["element"], "link n1 fab0") << by_id[id].dump(2);
  }
  for (const char* id : {"straggler", "straggler-2"}) {
    ASSERT_TRUE(by_id[id]["localisation"].is_object()) << by_id[id].dump(2);
    EXPECT_EQ(by_id[id]["localisation"]["element"], "rank 3 (n3)") << by_id[id].dump(2);
  }
  EXPECT_EQ(by_id["capped-link"]["measured_over"], "compound");
  EXPECT_EQ(by_id["capped-link-2"]["measured_over"], "alone");
  EXPECT_EQ(by_id["straggler-2"]["measured_over"], "alone");
  // Alone, the cap slows the job far more than the straggler does.
  EXPECT_GT(by_id["capped-link-2"]["slowdown"].get<double>(),
            2 * by_id["straggler-2"]["slowdown"].get<double>())
      << s["faults"].dump(2);

  ASSERT_EQ(s["compound_windows"].size(), 2u) << s["compound_windows"].dump(2);
  double total = 0;
  for (const auto& f : s["faults"]) {
    ASSERT_TRUE(f["lost_gpu_s"].is_number()) << f.dump(2);
    total += f["lost_gpu_s"].get<double>();
  }
  for (const auto& w : s["compound_windows"]) {
    ASSERT_TRUE(w["lost_gpu_s"].is_number()) << w.dump(2);
    total += w["lost_gpu_s"].get<double>();
    double shares = 0;
    for (const auto& [id, share] : w["shares"].items()) {
      ASSERT_TRUE(share.is_number()) << w.dump(2);
      shares += share.get<double>();
    }
    EXPECT_NEAR(shares, 1, 1e-3) << w.dump(2);
  }
  ASSERT_TRUE(s["lost_gpu_s"].is_number());
  EXPECT_NEAR(s["lost_gpu_s"].get<double>(), total, 0.01 * total + 0.01);
  // At most the GPU·s the four ranks had from the first apply to the end.
  EXPECT_LE(total, 4 * (s["phases"].back()["end_s"].get<double>() -
                        by_id["capped-link"]["applied_at_s"].get<double>()));
  std::printf(
      "[ measured ] overlapping faults: culprits %s / %s / %s / %s, lost GPU·s %.1f in all "
      "(windows %.1f + %.1f)\n",
      by_id["capped-link"]["localisation"]["element"].get<std::string>().c_str(),
      by_id["straggler"]["localisation"]["element"].get<std::string>().c_str(),
      by_id["capped-link-2"]["localisation"]["element"].get<std::string>().c_str(),
      by_id["straggler-2"]["localisation"]["element"].get<std::string>().c_str(), total,
      s["compound_windows"][0]["lost_gpu_s"].get<double>(),
      s["compound_windows"][1]["lost_gpu_s"].get<double>());
  EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
  EXPECT_EQ(FabricLinks(), before);
}

// A link degraded by hand in the middle of a drill, behind fdrill's back
// (tc on n1's fab0, as an operator or a failing NIC would): not a fault of
// the drill's, so it is an anomaly, with its culprit. Issue 49: in a drill
// of one phase and no baseline phase (a burn-in's shape), where it once went
// unseen (verdict pass, slowdown 1.0): the band is learned and rolling, and
// the phase's time-weighted slowdown shows it.
TEST_F(DrillE2E, ALinkDegradedByHandIsAnAnomalyWithItsCulprit) {
  fs::path scenario = work_ / "steady.yaml";
  std::ofstream(scenario) << R"(name: steady
fabric: {emulated: {nodes: 4}}
workload: {size: 4M}
phases:
  - {name: steady, duration: 32s}
)";
  fs::path out = work_ / "run";
  std::atomic<bool> done{false};
  std::thread hand([&] {
    // Into the steady phase (the drill's start takes a few seconds), 8 s.
    for (int i = 0; i < 170 && !done; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (done) return;
    Sh({"ip", "netns", "exec", Netns("n1"), "tc", "qdisc", "add", "dev", "fab0", "root", "tbf",
        "rate", "100mbit", "burst", "128k", "latency", "50ms"});
    for (int i = 0; i < 80 && !done; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Sh({"ip", "netns", "exec", Netns("n1"), "tc", "qdisc", "del", "dev", "fab0", "root"});
  });
  auto run = Fdrill({"run", scenario.string(), "--out", out.string()}, 180);
  done = true;
  hand.join();
  json s = ReadJson(out / "summary.json");
  EXPECT_TRUE(s["faults"].empty());
  ASSERT_EQ(s["anomalies"].size(), 1u) << s["anomalies"].dump(2) << run.err;
  const json& a = s["anomalies"][0];
  EXPECT_EQ(a["culprit"]["element"], "link n1 fab0") << a.dump(2);
  EXPECT_GE(a["slowdown"].get<double>(), 2.0) << a.dump(2);
  EXPECT_GE(a["end_s"].get<double>() - a["start_s"].get<double>(), 4.0) << a.dump(2);
  EXPECT_EQ(s["baseline"]["learned"], true);
  ASSERT_EQ(s["phases"].size(), 1u);
  EXPECT_GE(s["phases"][0]["slowdown"].get<double>(), 1.15) << s["phases"].dump(2);
  std::printf(
      "[ measured ] one-phase drill, link slowed by hand: anomaly %.1f-%.1f s, %.2fx, "
      "culprit %s; phase slowdown %.2fx (median column %.3f GB/s, time-weighted %.3f)\n",
      a["start_s"].get<double>(), a["end_s"].get<double>(), a["slowdown"].get<double>(),
      a["culprit"]["element"].get<std::string>().c_str(), s["phases"][0]["slowdown"].get<double>(),
      s["phases"][0]["busbw_gbps_p50"].get<double>(),
      s["phases"][0]["busbw_gbps_mean"].get<double>());
}

// fdrill campaign: the same short drill twice into one indexed directory;
// each run records what its nodes ran, and fdrill compare of the two finds
// nothing that differs; the fabric is as it was.
// A/B across a real configuration change (issue 20): two campaigns of a
// short fault-free drill (the first also shows what a campaign records of
// each run), between them every node's TCP buffers cut to 4 KiB
// (net.ipv4.tcp_wmem / tcp_rmem, per network namespace, as an operator's
// tuning change would). fdrill compare names the sysctls that differ and
// calls busbw a regression; the first campaign against itself is no change.
TEST_F(DrillE2E, CompareOfTwoCampaignsFlagsSmallerTcpBuffersAndClearsTheSameCampaign) {
  fs::path scenario = work_ / "measure.yaml";
  std::ofstream(scenario) << R"(name: measure
fabric:
  emulated: {nodes: 4}
workload: {op: all_reduce, dtype: float32, size: 4M, ranks_per_node: 1, backend: mpi}
phases:
  - {name: baseline, duration: 4s}
  - {name: measure, duration: 4s}
)";
  auto campaign = [&](const std::string& label) {
    fs::path dir = work_ / label;
    auto run = Fdrill({"campaign", scenario.string(), "--repeat", "3", "--label", label, "--out",
                       dir.string(), "--quiet"},
                      300);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return dir;
  };
  const fs::path before = campaign("before");
  // A campaign records what each node ran, run by run.
  json index = ReadJson(before / "campaign.json");
  EXPECT_EQ(index["complete"], true) << index.dump(2);
  ASSERT_EQ(index["runs"].size(), 3u);
  for (const char* r : {"run-01", "run-02", "run-03"}) {
    ASSERT_TRUE(fs::exists(before / r / "summary.json")) << r;
    json inv = ReadJson(before / r / "inventory.json");
    ASSERT_EQ(inv["nodes"].size(), 4u);
    EXPECT_TRUE(inv["nodes"][0]["software"]["kernel"].is_string()) << inv["nodes"][0].dump();
    EXPECT_TRUE(inv["nodes"][0]["software"]["sysctl"].contains("net.ipv4.tcp_congestion_control"));
    // Issue 21: n0's own interfaces, not the machine's (eth0, fdm-br, ifb0).
    std::set<std::string> n0_netdevs;
    for (const auto& nd : inv["nodes"][0]["netdevs"])
      n0_netdevs.insert(nd["name"].get<std::string>());
    EXPECT_EQ(n0_netdevs, (std::set<std::string>{"fab0", "mgmt0"})) << inv["nodes"][0].dump();
    // The MPI the ranks loaded, one line for all four nodes (one rank each).
    std::ifstream log(before / r / "workload.log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("# loaded mpi on n0, n1, n2, n3: Open MPI v"), std::string::npos) << text;
  }
  auto runs = Fdrill({"compare", (before / "run-01").string(), (before / "run-02").string()});
  EXPECT_NE(runs.out.find("What the nodes ran: the same in both"), std::string::npos) << runs.out;
  for (int i = 0; i < 4; ++i) {
    const std::string ns = Netns("n" + std::to_string(i));
    for (const char* sysctl : {"tcp_wmem", "tcp_rmem"}) {
      Sh({"ip", "netns", "exec", ns, "sh", "-c",
          std::string("echo '4096 4096 4096' > /proc/sys/net/ipv4/") + sysctl});
    }
  }
  const fs::path after = campaign("after");

  const fs::path json_path = work_ / "ab.json";
  auto ab = Fdrill({"compare", before.string(), after.string(), "--json", json_path.string()});
  EXPECT_EQ(ab.exit_code, 1) << ab.out << ab.err;
  EXPECT_NE(ab.out.find("## What differs"), std::string::npos) << ab.out;
  EXPECT_NE(ab.out.find("net.ipv4.tcp_wmem"), std::string::npos) << ab.out;
  EXPECT_NE(ab.out.find("net.ipv4.tcp_rmem"), std::string::npos) << ab.out;
  json j = ReadJson(json_path);
  EXPECT_EQ(j["a"]["runs"], 3);
  bool baseline_regressed = false;
  for (const auto& row : j["rows"]) {
    if (row["group"] == "busbw" && row["phase"] == "baseline") {
      EXPECT_EQ(row["basis"], "runs");
      EXPECT_LT(row["ratio"].get<double>(), 0.97) << row.dump();
      baseline_regressed = row["verdict"] == "regression";
      EXPECT_TRUE(baseline_regressed) << row.dump();
    }
  }
  EXPECT_TRUE(baseline_regressed) << j.dump(2);

  auto same = Fdrill({"compare", before.string(), before.string()});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("What the nodes ran: the same in both"), std::string::npos) << same.out;
  EXPECT_TRUE(same.out.starts_with("# fdrill compare — no change")) << same.out;
}

// The library's emulated drills (scenarios/*.yaml, not *.hw.yaml) that the
// tests above do not run: each passes, recovers and leaves nothing behind.
TEST_F(DrillE2E, LibraryDrillsPassAndLeaveNothing) {
  const std::string before = FabricLinks();
  for (const char* name :
       {"link-degrade-ramp", "ib-port-flap", "ib-width-downgrade", "nvlink-throttle",
        "gpu-straggler", "firmware-regression", "burn-in-soak.short"}) {
    SCOPED_TRACE(name);
    fs::path out = work_ / name;
    // At half length (issue 55: CI time); every assertion below holds there.
    auto run = RunDrill(name, out, 400, "0.5");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(ReadJson(out / "plan.json")["time_scale"], 0.5);
    json s = ReadJson(out / "summary.json");
    EXPECT_EQ(s["verdict"], "pass") << s["expectations"].dump(2) << s["errors"].dump(2);
    EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
    EXPECT_TRUE(s["stopped"].is_null()) << s["stopped"];
    EXPECT_EQ(FabricLinks(), before);
    // Every gate ended because the job was stable, not at its timeout.
    for (const json& e : ReadJsonLines(out / "events.jsonl")) {
      if (e["type"] == "phase_end" &&
          e["reason"].get<std::string>().find("timeout") != std::string::npos) {
        ADD_FAILURE() << "gate timed out: " << e.dump();
      }
    }
    if (std::string(name) == "link-degrade-ramp") {
      // One fault per step, each measured; the 25 Mbit/s step hurts most.
      ASSERT_EQ(s["faults"].size(), 3u) << s["faults"].dump(2);
      EXPECT_EQ(s["faults"][0]["id"], "degrade@n1@400mbit");
      EXPECT_EQ(s["faults"][2]["id"], "degrade@n1@25mbit");
      EXPECT_GT(s["faults"][2]["slowdown"].get<double>(), s["faults"][0]["slowdown"].get<double>())
          << s["faults"].dump(2);
    }
    if (std::string(name) == "gpu-straggler") {
      // The seeded pick (the same in plan and run) is where the fault ran.
      ASSERT_EQ(s["faults"].size(), 1u);
      auto plan =
          Fdrill({"plan", std::string(FDRILL_SOURCE_DIR) + "/scenarios/gpu-straggler.yaml"});
      EXPECT_NE(plan.out.find("apply  " + s["faults"][0]["id"].get<std::string>() + " on " +
                              s["faults"][0]["node"].get<std::string>()),
                std::string::npos)
          << plan.out;
    }
    if (std::string(name) == "burn-in-soak.short") {
      EXPECT_EQ(s["faults"].size(), 4u);  // 2 cycles x (flap, cap)
    }
  }
}

// Issue 49: a seeded sample of bench/localisation.sh's sets of faults in
// force together (the first of its nine shapes in seed 1's order: a link
// flap and a straggler, staggered), run as the benchmark runs
// them (a fabric of its own, named lb, beside the others): each fault named right,
// each set seen as a compound window, no false positive.
TEST(LocalisationBench, ASeededSampleOfFaultsInForceTogetherIsNamedFaultByFault) {
  RealProcessRunner runner;
  auto r = runner.Run(
      {"env", std::string("FDRILL=") + FDRILL_BIN, "FDRILL_FABRIC=lb", "bash",
       std::string(FDRILL_SOURCE_DIR) + "/bench/localisation.sh", "1", "0", "0", "1", "0"},
      std::chrono::seconds(300));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 0) << r->out << r->err;
  std::printf("%s", r->out.c_str());
  EXPECT_THAT(r->out,
              ::testing::HasSubstr("sets in force together seen as compound windows: 1 of 1"))
      << r->out;
  EXPECT_THAT(r->out, ::testing::HasSubstr("false positives: 0 "));
  EXPECT_THAT(r->out, ::testing::Not(::testing::HasSubstr("wrong:"))) << r->out;
  EXPECT_THAT(r->out, ::testing::ContainsRegex("compound +all +[0-9]+ +[0-9]+ +100.0%")) << r->out;
}

}  // namespace
}  // namespace fdrill

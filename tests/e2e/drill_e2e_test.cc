// End-to-end: `fdrill fabric up`, `fdrill run`, and what the run directory
// says, on a real 4-node emulated fabric. Each test brings the fabric up and
// tears it down in TearDown, also when an assertion fails.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/host/real_process_runner.h"
#include "tests/support/e2e_cli.h"
#include "tests/support/fabric_test.h"
#include "tests/support/json_lines.h"
#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

using e2e::Fdrill;
using e2e::ReadJson;
using e2e::Sh;

class DrillE2E : public e2e::FabricTest {
 protected:
  void SetUp() override { BringUp("fdrill-e2e-", {"--nodes", "4"}); }

  // Root qdisc kind and admin state of fab0 on every node, to prove nothing
  // was touched.
  std::string FabricLinks() {
    std::string out;
    for (int i = 0; i < 4; ++i) {
      std::string ns = "fdrill-n" + std::to_string(i);
      out += Sh({"ip", "netns", "exec", ns, "tc", "qdisc", "show", "dev", "fab0", "root"});
      out += Sh({"ip", "-n", ns, "-br", "link", "show", "fab0"});
    }
    return out;
  }

  fs::path WriteScenario(const std::string& name, const std::string& from, const std::string& to) {
    std::ifstream in(std::string(FDRILL_SOURCE_DIR) + "/scenarios/quickstart.yaml");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    auto at = text.find(from);
    EXPECT_NE(at, std::string::npos);
    text.replace(at, from.size(), to);
    fs::path p = work_ / name;
    std::ofstream(p) << text;
    return p;
  }

  // `fdrill run scenarios/NAME.yaml --out OUT`.
  // scenarios/NAME.yaml into OUT; with TIME_SCALE its windows scaled
  // (fdrill run --time-scale), where the test's assertions hold at it.
  static ProcessResult RunDrill(const std::string& name, const fs::path& out, int timeout_s,
                                const std::string& time_scale = "1") {
    return Fdrill({"run", std::string(FDRILL_SOURCE_DIR) + "/scenarios/" + name + ".yaml", "--out",
                   out.string(), "--time-scale", time_scale},
                  timeout_s);
  }
};

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
    Sh({"ip", "netns", "exec", "fdrill-n1", "tc", "qdisc", "add", "dev", "fab0", "root", "tbf",
        "rate", "100mbit", "burst", "128k", "latency", "50ms"});
    for (int i = 0; i < 80 && !done; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Sh({"ip", "netns", "exec", "fdrill-n1", "tc", "qdisc", "del", "dev", "fab0", "root"});
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

// Processes of fdrill's own: the workload's ranks and fdrill-burn, by
// executable, anywhere on the machine (every emulated node shares it).
int OwnProcesses(bool stopped_only) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::error_code ec;
    fs::path exe = fs::read_symlink(e.path() / "exe", ec);
    if (ec) continue;
    std::string name = exe.filename().string();
    if (name != "fdrill-collective" && name != "fdrill-burn") continue;
    std::ifstream stat(e.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto close = text.rfind(')');
    const bool stopped =
        close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'T';
    if (!stopped_only || stopped) ++n;
  }
  return n;
}

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
  EXPECT_EQ(OwnProcesses(false), 0) << "a rank or fdrill-burn outlived the drill";
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
          Sh({"ip", "netns", "exec", "fdrill-n" + std::to_string(i), "iptables-save"});
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
  EXPECT_EQ(OwnProcesses(false), 0) << "a rank outlived the aborted job";
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
    const std::string ns = "fdrill-n" + std::to_string(i);
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

TEST_F(DrillE2E, MissingInterfaceIsRefusedBeforeAnythingIsTouched) {
  std::string before = FabricLinks();
  fs::path scenario = WriteScenario("bad-iface.yaml", "{interface: fab0, rate: 100mbit}",
                                    "{interface: fab9, rate: 100mbit}");
  fs::path out = work_ / "bad-run";
  auto run = Fdrill({"run", scenario.string(), "--out", out.string()});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("n1"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("slow-link"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("fab9"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(out)) << "no run directory for a drill that never started";
  EXPECT_EQ(FabricLinks(), before);
}

// An agent that stays dead: the fabric's supervisor (which would start it
// again within a second) is killed first, as on a node whose agent is down
// for good. The drill names it and touches nothing; `fabric down` (TearDown)
// still removes everything without the supervisor.
TEST_F(DrillE2E, AnAgentThatDoesNotAnswerIsNamedAndNothingIsApplied) {
  std::string before = FabricLinks();
  json fabric = ReadJson("/run/fdrill/fabric/fabric.json");
  const int supervisor = fabric["supervisor_pid"].get<int>();
  ASSERT_GT(supervisor, 0);
  ASSERT_EQ(kill(supervisor, SIGKILL), 0);  // ours, started by this test's `fabric up`
  int pid = fabric["nodes"][3]["agent_pid"].get<int>();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(kill(pid, SIGKILL), 0);  // our own agent, started by this test's `fabric up`
  auto run = Fdrill({"run", std::string(FDRILL_SOURCE_DIR) + "/scenarios/quickstart.yaml", "--out",
                     (work_ / "no-agent").string()});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("agent n3"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(work_ / "no-agent"));
  EXPECT_EQ(FabricLinks(), before);
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

// Issue #8: the restart policy. A killed rank and a hung rank each end in a
// relaunch from the checkpoint with the fault-free digest and at most one
// checkpoint interval redone; a link cut longer than the transport waits is
// a hang, restarted until the link is back; a crash loop exhausts the
// restarts and fails with the reason. Nothing is left behind in any case.
TEST_F(DrillE2E, RestartPolicyRecoversCrashesAndHangsAndStopsACrashLoop) {
  struct Case {
    const char* name;
    int exit_code;
    const char* cause;  // of the first failure
  };
  for (const Case& c :
       {Case{"rank-crash-rollback", 0, "exit"}, Case{"rank-hang-rollback", 0, "hang"},
        Case{"partition-rollback", 0, "hang"}, Case{"crash-loop", 1, "exit"}}) {
    SCOPED_TRACE(c.name);
    fs::path out = work_ / c.name;
    auto run = RunDrill(c.name, out, 300);
    EXPECT_EQ(run.exit_code, c.exit_code) << run.err;
    json s = ReadJson(out / "summary.json");
    const json& rb = s["rollback"];
    EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
    EXPECT_EQ(Sh({"pgrep", "-x", "fdrill-collective"}), "") << "ranks left running";
    ASSERT_FALSE(rb["failures"].empty()) << rb.dump(2);
    const json& first = rb["failures"][0];
    EXPECT_EQ(first["cause"], c.cause) << first.dump();
    ASSERT_TRUE(first["time_to_detect_s"].is_number()) << first.dump();
    if (c.exit_code == 0) {
      EXPECT_EQ(s["verdict"], "pass") << s["expectations"].dump(2) << s["errors"].dump(2);
      EXPECT_GE(rb["restarts"].get<int>(), 1);
      EXPECT_TRUE(rb["data_intact"].get<bool>());
      ASSERT_TRUE(rb["digest"].is_string()) << rb.dump(2);
      EXPECT_EQ(rb["digest"], rb["expected_digest"]);
      const json& last = rb["failures"].back();  // the one whose relaunch got going
      ASSERT_TRUE(last["time_to_restart_s"].is_number()) << rb.dump(2);
      ASSERT_TRUE(last["iterations_lost"].is_number()) << rb.dump(2);
      EXPECT_LE(last["iterations_lost"].get<int>(), 20);  // checkpoint_every
      EXPECT_TRUE(last["back_in_band_s"].is_number()) << rb.dump(2);
      if (std::string(c.name) == "rank-crash-rollback") {
        // The outage — the kill until the relaunched job's first step — and
        // the steps redone cost the whole job: at least ranks x the outage.
        // The events time the outage's end when the controller receives the
        // relaunch's first record: up to one iteration (~11 ms here) and one
        // push (20 ms) after that progress began, so 0.05 s of it is not lost.
        const double outage =
            first["time_to_detect_s"].get<double>() + last["time_to_restart_s"].get<double>();
        const json& crash = s["faults"][0];
        std::cout << "rank-crash-rollback: outage " << outage << " s, steps redone "
                  << last["iterations_lost"] << ", lost_gpu_s " << crash["lost_gpu_s"] << ", ettr "
                  << s["ettr"] << "\n";
        ASSERT_TRUE(crash["lost_gpu_s"].is_number()) << crash.dump();
        EXPECT_GE(crash["lost_gpu_s"].get<double>(), 4 * (outage - 0.05)) << crash.dump();
        EXPECT_LT(s["ettr"].get<double>(), 1.0);
      }
    } else {
      EXPECT_EQ(s["verdict"], "fail");
      EXPECT_EQ(rb["restarts"], 2);
      ASSERT_TRUE(s["stopped"].is_string()) << s.dump(2);
      EXPECT_NE(s["stopped"].get<std::string>().find("restarts exhausted (max_restarts 2)"),
                std::string::npos)
          << s["stopped"];
    }
  }
}

// Issue 50: the PyTorch DDP job (scenarios/jobs/ddp_train.py, Debian's
// python3-torch over gloo) as the workload, measured by its own step
// lines: a capped link's step-time slowdown, a killed rank relaunched and
// resumed with the fault-free digest, a stopped rank recorded as a hang.
TEST_F(DrillE2E, PytorchJobDrillsMeasureTheJobsOwnStepsAndRollBack) {
  const std::string before = FabricLinks();
  {
    fs::path out = work_ / "cap";
    auto run = RunDrill("pytorch-ddp-link-cap", out, 300);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    json s = ReadJson(out / "summary.json");
    EXPECT_EQ(s["verdict"], "pass") << s["expectations"].dump(2) << s["errors"].dump(2);
    EXPECT_EQ(s["rate_unit"], "steps/s");
    ASSERT_EQ(s["faults"].size(), 1u);
    const json& cap = s["faults"][0];
    std::cout << "pytorch-ddp-link-cap: baseline " << s["baseline"]["busbw_median"]
              << " steps/s, slowdown " << cap["slowdown"] << ", culprit "
              << cap["localisation"]["element"] << "\n";
    ASSERT_TRUE(cap["slowdown"].is_number()) << cap.dump(2);
    EXPECT_GE(cap["slowdown"].get<double>(), 2.0);
    EXPECT_EQ(cap["localisation"]["element"], "link n1 fab0") << cap.dump(2);
    // Step records of every rank, from the job's own Megatron-style lines.
    std::set<int> ranks;
    for (const json& r : ReadJsonLines(out / "metrics.jsonl")) {
      if (r.value("op", "") == "step") ranks.insert(r["rank"].get<int>());
    }
    EXPECT_EQ(ranks, (std::set<int>{0, 1, 2, 3}));
    std::ifstream brief(out / "report.md");
    std::string md((std::istreambuf_iterator<char>(brief)), std::istreambuf_iterator<char>());
    EXPECT_NE(md.find("median step rate"), std::string::npos);
    EXPECT_NE(run.err.find("ms a step"), std::string::npos) << run.err;
  }
  for (const char* name : {"pytorch-rank-kill-rollback", "pytorch-hang"}) {
    SCOPED_TRACE(name);
    fs::path out = work_ / name;
    auto run = RunDrill(name, out, 300);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    json s = ReadJson(out / "summary.json");
    EXPECT_EQ(s["verdict"], "pass") << s["expectations"].dump(2) << s["errors"].dump(2);
    const json& rb = s["rollback"];
    EXPECT_EQ(rb["restarts"], 1) << rb.dump(2);
    ASSERT_FALSE(rb["failures"].empty()) << rb.dump(2);
    const json& first = rb["failures"][0];
    EXPECT_EQ(first["cause"], std::string(name) == "pytorch-hang" ? "hang" : "exit")
        << first.dump();
    ASSERT_TRUE(first["iterations_lost"].is_number()) << first.dump();
    EXPECT_LE(first["iterations_lost"].get<int>(), 10);  // checkpoint_every
    ASSERT_TRUE(rb["digest"].is_string()) << rb.dump(2);
    EXPECT_EQ(rb["digest"], rb["expected_digest"]);
    EXPECT_EQ(rb["digest_steps"], 60);
    if (std::string(name) == "pytorch-hang") {  // expect.digest with a tolerance
      EXPECT_EQ(rb["digest_key"], "param_norm");
      EXPECT_EQ(rb["digest_tolerance"], 1e-9);
      EXPECT_EQ(rb["digest_difference"], 0.0);
    } else {
      EXPECT_EQ(rb["digest_key"], "digest");
      EXPECT_TRUE(rb["digest_tolerance"].is_null());
    }
    std::cout << name << ": cause " << first["cause"] << ", detected in "
              << first["time_to_detect_s"] << " s, restarted in " << first["time_to_restart_s"]
              << " s, steps redone " << first["iterations_lost"] << ", digest " << rb["digest"]
              << "\n";
    EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
    EXPECT_EQ(Sh({"pgrep", "-f", "ddp_train.py"}), "") << "ranks left running";
  }
  EXPECT_EQ(FabricLinks(), before);
}

// Issue 50's bad input, refused before any fault: an interpreter without
// torch (a stand-in python3 that cannot import it), and step lines the job
// never prints (its log's last lines in the error).
TEST_F(DrillE2E, AJobThatCannotBeMeasuredIsRefusedBeforeAnyFault) {
  const std::string before = FabricLinks();
  const fs::path fake_python = work_ / "python3";
  std::ofstream(fake_python) << "#!/bin/sh\necho \"ModuleNotFoundError: No module named "
                                "'torch'\" >&2\nexit 1\n";
  fs::permissions(fake_python, fs::perms::owner_all);
  const std::string job = R"(name: bad-job
fabric:
  emulated: {nodes: 4}
workload:
  command: COMMAND
  METRICS
targets:
  capped: {nodes: n1, interface: fab0}
phases:
  - name: baseline
    duration: 5s
  - name: cap
    duration: 5s
    faults:
      - {id: cap, kind: link_rate, target: capped, params: {rate: 50mbit}}
  - name: recovery
    duration: 5s
)";
  auto write = [&](const std::string& name, const std::string& command,
                   const std::string& metrics) {
    std::string text = job;
    text.replace(text.find("COMMAND"), 7, command);
    text.replace(text.find("METRICS"), 7, metrics);
    std::ofstream(work_ / name) << text;
    return (work_ / name).string();
  };
  auto no_torch = Fdrill({"run",
                          write("no-torch.yaml", "[" + fake_python.string() + ", train.py]",
                                "framework: pytorch\n  metrics: megatron"),
                          "--out", (work_ / "no-torch").string()});
  EXPECT_EQ(no_torch.exit_code, 2);
  EXPECT_NE(no_torch.err.find("workload.framework: pytorch: " + fake_python.string() +
                              " cannot import torch (ModuleNotFoundError: No module named "
                              "'torch'); install it on every node (Debian: apt-get install "
                              "python3-torch)"),
            std::string::npos)
      << no_torch.err;
  EXPECT_FALSE(fs::exists(work_ / "no-torch" / "events.jsonl"));
  const fs::path silent_out = work_ / "silent";
  auto silent = Fdrill(
      {"run",
       write("silent.yaml", R"([/bin/sh, -c, "echo warming up; sleep 120"])", "metrics: megatron"),
       "--out", silent_out.string(), "--start-timeout", "8s"},
      120);
  EXPECT_EQ(silent.exit_code, 2) << silent.err;
  EXPECT_NE(silent.err.find("no step line matched preset megatron in the first 8s of "
                            "workload.log"),
            std::string::npos)
      << silent.err;
  EXPECT_NE(silent.err.find("    warming up"), std::string::npos) << silent.err;
  json s = ReadJson(silent_out / "summary.json");
  EXPECT_TRUE(s["faults"].empty()) << s["faults"].dump();
  EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
  for (const json& e : ReadJsonLines(silent_out / "events.jsonl")) {
    EXPECT_NE(e["type"], "fault_applied") << e.dump();
  }
  EXPECT_EQ(Sh({"pgrep", "-f", "warming up"}), "") << "the job left running";
  EXPECT_EQ(FabricLinks(), before);
}

// Issue 49: a seeded sample of bench/localisation.sh's sets of faults in
// force together (the first of its nine shapes in seed 1's order: a link
// flap and a straggler, staggered), run as the benchmark runs
// them (its own fabric, no fabric of a fixture's up): each fault named right,
// each set seen as a compound window, no false positive.
TEST(LocalisationBench, ASeededSampleOfFaultsInForceTogetherIsNamedFaultByFault) {
  RealProcessRunner runner;
  auto r = runner.Run(
      {"env", std::string("FDRILL=") + FDRILL_BIN, "bash",
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

TEST(DrillBadInput, MissingScenarioFileAndUnknownKeyExit2) {
  auto missing = Fdrill({"run", "/nonexistent/drill.yaml"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/drill.yaml"), std::string::npos) << missing.err;
  fs::path p = fs::temp_directory_path() / ("fdrill-typo-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(p) << "name: typo\nfabric: {emulated: {nodes: 2}}\nphases:\n  - name: baseline\n   "
                      " duraton: 5s\n";
  auto typo = Fdrill({"run", p.string()});
  fs::remove(p);
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find(p.string() + ":5:5"), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("did you mean \"duration\""), std::string::npos) << typo.err;
}

// Each (scenario text, error) refused by validate, plan and run alike:
// exit 2, and the error names the file followed by `error` (its line).
void ExpectEveryVerbRefuses(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [text, error] : cases) {
    fs::path p =
        fs::temp_directory_path() / ("fdrill-refused-" + std::to_string(getpid()) + ".yaml");
    std::ofstream(p) << text;
    for (const char* verb : {"validate", "plan", "run"}) {
      auto r = Fdrill({verb, p.string()});
      EXPECT_EQ(r.exit_code, 2) << verb << ": " << r.err;
      EXPECT_NE(r.err.find(p.string() + error), std::string::npos) << verb << ": " << r.err;
    }
    fs::remove(p);
  }
}

// Issue 21: a duplicated key and a number out of range are refused by
// validate, plan and run alike, with exit 2 and the file:line, before
// anything is touched.
TEST(DrillBadInput, ADuplicateKeyOrAnOutOfRangeNumberExits2WithFileAndLine) {
  const std::string head = "name: strict\nfabric: {emulated: {nodes: 2}}\nphases:\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {head + "  - name: baseline\n    duration: 5s\n    duration: 50s\n",
       ":6:5: duplicate key \"duration\" (first at line 5)"},
      {head + "  - name: hit\n    duration: 5s\n    faults:\n      - kind: link_rate\n"
              "        node: n1\n        params:\n          interface: fab0\n"
              "          rate: 99999999tbit\n",
       ":11:17: fault hit-link_rate: params.rate: rate \"99999999tbit\" is out of range: "
       "accepted 8kbit..10tbit"}};
  ExpectEveryVerbRefuses(cases);
}

// Issue 49: a partition from a prefix holding the management network, a
// name that would leave runs/, refused by validate, plan and run alike
// (exit 2, file:line) before anything is touched; an unknown subcommand
// and a log level fdrill does not have are named.
TEST(DrillBadInput, APrefixHoldingTheManagementNetworkOrAPathInTheNameExits2) {
  const std::string drill =
      "name: cut\nfabric: {emulated: {nodes: 4}}\nphases:\n  - name: hit\n    duration: 2s\n"
      "    faults:\n      - kind: link_partition\n        node: n1\n"
      "        params: {peers: [0.0.0.0/0]}\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {drill,
       ":9:25: fault hit-link_partition: params.peers 0.0.0.0/0 holds addresses of the "
       "emulated fabric's management network 198.19.0.0/24"},
      {"name: \"../../../../elsewhere/escaped\"\n" + drill.substr(drill.find('\n') + 1),
       ":1:7: name: \"../../../../elsewhere/escaped\" holds a path separator"}};
  ExpectEveryVerbRefuses(cases);
  EXPECT_FALSE(fs::exists("/elsewhere/escaped"));
  // A leaf taken down counts every node behind it against the default limit
  // of one faulted node (scenarios/leaf-down.yaml without its blast radius),
  // where it once passed as one.
  std::ifstream leaf(std::string(FDRILL_SOURCE_DIR) + "/scenarios/leaf-down.yaml");
  std::string leaf_down((std::istreambuf_iterator<char>(leaf)), std::istreambuf_iterator<char>());
  const std::string radius = "  blast_radius: {max_rails: 1, max_leaves: 1, max_nodes: 4}\n";
  ASSERT_NE(leaf_down.find(radius), std::string::npos);
  leaf_down.replace(leaf_down.find(radius), radius.size(), "  lease_ttl: 5s\n");
  ExpectEveryVerbRefuses(
      {{leaf_down,
        ":25:9: safety.max_faulted_nodes 1 (the default): at t=8s (phase leaf-down +0s) fault "
        "rail1-leaf0-down is in force on nodes n0, n1, n2 and n3 (4 nodes); a switch counts "
        "every node behind it"}});
  auto typo = Fdrill({"valdate", "x.yaml"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("\"valdate\" is not a subcommand; did you mean \"validate\"?"),
            std::string::npos)
      << typo.err;
  auto level = Fdrill({"--log-level", "verbose", "injectors"});
  EXPECT_EQ(level.exit_code, 2);
  EXPECT_NE(level.err.find("verbose"), std::string::npos) << level.err;
}

}  // namespace
}  // namespace fdrill

// A real-cluster drill end to end without a cluster: four fdrill-agent
// processes with --fake-host on 127.1.0.1-4 (the real agent, wire, journal
// and lease; faults recorded, not applied), a hosts file naming them, and as
// the workload a script that prints nccl-tests' result table (launcher:
// none, output: nccl-tests). It proves the path a cluster takes: hosts-file
// inventory, agents dialled by name at fabric.agent_port, the launcher run
// on the controller's host, its output parsed live into metrics.jsonl and
// the progress line, faults applied and reverted on the named node, the job
// stopped at the end and nothing of it left running. No root needed.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/host/real_process_runner.h"
#include "tests/fakes/fake_ras_server.h"

extern char** environ;

namespace fdrill {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Rows every 50 ms; between 3.3 s and 5.7 s after it starts, each row takes
// ten times as long (a slowdown the report must see inside the fault's
// 3 s - 6 s window, whose timeline starts at the first row).
constexpr char kFakePerf[] = R"(#!/bin/sh
echo "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
echo "#"
echo "# Using devices"
echo "#  Rank  0 Group  0 Pid  4242 on  fakenode device  0 [0x07] NVIDIA H100 80GB HBM3"
echo "#"
echo "#                                                              out-of-place                       in-place          "
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
echo "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "
start=$(date +%s%N)
while :; do
  t=$(( ($(date +%s%N) - start) / 1000000 ))
  if [ $t -ge 3300 ] && [ $t -lt 5700 ]; then
    echo "     1048576        262144     float     sum      -1    521.0    2.01    3.77      0    519.0    2.02    3.78      0"
  else
    echo "     1048576        262144     float     sum      -1    52.10   20.13   37.74      0    51.90   20.20   37.88      0"
  fi
  sleep 0.05
done
)";

class ClusterDrill : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = fs::temp_directory_path() / ("fdrill-cluster-" + std::to_string(getpid()));
    fs::remove_all(work_);
    fs::create_directories(work_);
    port_ = 20000 + getpid() % 20000;
    for (int i = 1; i <= 4; ++i) {
      const std::string node = "127.1.0." + std::to_string(i);
      std::vector<std::string> argv = {FDRILL_AGENT_BIN,
                                       "--fake-host",
                                       "--insecure",
                                       "--node",
                                       node,
                                       "--listen",
                                       node + ":" + std::to_string(port_),
                                       "--state-dir",
                                       (work_ / ("agent" + std::to_string(i))).string(),
                                       "--log-level",
                                       "warn"};
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      pid_t pid = 0;
      ASSERT_EQ(posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ), 0);
      agents_.push_back(pid);
    }
    std::ofstream(work_ / "hosts") << "# four fake agents on loopback\n127.1.0.[1-4]\n";
    std::ofstream(work_ / "fake_perf.sh") << kFakePerf;
    std::ofstream(work_ / "drill.yaml")
        << "name: cluster-nccl-tests\n"
        << "fabric: {hosts: hosts, agent_port: " << port_
        << "}\n"
        // The fake agents' fab0 is a RoCE netdev (mlx5_0, link layer
        // Ethernet): this NCCL job runs over its socket transport
        // (NCCL_IB_DISABLE=1), which a tc cap there does reach.
        << "workload: {command: [sh, " << (work_ / "fake_perf.sh").string()
        << "], output: nccl-tests, launcher: none, transport: tcp}\n"
        << R"(phases:
  - {name: baseline, duration: 3s}
  - name: hit
    duration: 3s
    faults:
      - {id: cap, kind: link_rate, node: 127.1.0.2, params: {interface: fab0, rate: 100mbit}}
  - {name: recovery, duration: 3s}
expect:
  max_slowdown: 2
)";
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the agents start listening
  }
  void TearDown() override {
    // Only the agents this test started, by pid.
    for (pid_t pid : agents_) {
      kill(pid, SIGTERM);
      int st = 0;
      waitpid(pid, &st, 0);
    }
    RealProcessRunner runner;
    auto left =
        runner.Run({"pgrep", "-f", (work_ / "fake_perf.sh").string()}, std::chrono::seconds(5));
    EXPECT_TRUE(left.ok() && left->out.empty())
        << "the workload outlived the drill: " << (left.ok() ? left->out : "");
    fs::remove_all(work_);
  }
  // `fdrill run drill.yaml --insecure --out <work>/run`; a runner error
  // fails the test.
  ProcessResult RunDrill(int timeout_s) {
    RealProcessRunner runner;
    auto run = runner.Run({FDRILL_BIN, "run", (work_ / "drill.yaml").string(), "--insecure",
                           "--out", (work_ / "run").string()},
                          std::chrono::seconds(timeout_s));
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() ? *run : ProcessResult{};
  }

  fs::path work_;
  int port_ = 0;
  std::vector<pid_t> agents_;
};

// The run directories (/tmp/fdrill-<run>) on this machine, which the fake
// agents share.
std::set<std::string> RunDirs() {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator("/tmp")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("fdrill-", 0) == 0 && name.size() > 7 &&
        std::isdigit(static_cast<unsigned char>(name[7])))
      out.insert(name);
  }
  return out;
}

TEST_F(ClusterDrill, HostsFileAgentsAndANcclTestsWorkloadRunOnTheControllersHost) {
  const auto dirs_before = RunDirs();
  const fs::path out = work_ / "run";
  // The operator's topology file: two leaves of two nodes on the one rail
  // (the fake agents' mlx5_0 under fab0). The run's inventory lists them.
  std::ofstream(work_ / "topology.yaml") << R"(rails:
  rail0: {devices: [mlx5_0], interfaces: [fab0]}
leaves:
  leaf0: {nodes: "127.1.0.[1-2]"}
  leaf1: {nodes: "127.1.0.[3-4]"}
)";
  std::ofstream(work_ / "drill.yaml", std::ios::app) << "topology: topology.yaml\n";
  // The NCCL job's RAS service (a fake that speaks NCCL 2.28's protocol),
  // which every agent is asked to watch at the job's NCCL_RAS_ADDR: healthy
  // until the fault is applied, then one process missing.
  testing::FakeRasServer ras;
  const std::string ras_addr = "127.0.0.1:" + std::to_string(ras.port());
  setenv("NCCL_RAS_ADDR", ras_addr.c_str(), 1);
  std::atomic<bool> done{false};
  std::thread flip([&] {
    while (!done) {
      std::ifstream ein(out / "events.jsonl");
      std::string text((std::istreambuf_iterator<char>(ein)), std::istreambuf_iterator<char>());
      if (text.find("\"fault_applied\"") != std::string::npos) {
        ras.set_job(testing::FakeRasJob{.missing = 1});
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  const ProcessResult run = RunDrill(120);
  done = true;
  flip.join();
  unsetenv("NCCL_RAS_ADDR");
  // The fault made the job 10x slower: the expectation (max 2x) fails.
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  // Not a terminal: plain progress lines, one naming the fault in force.
  EXPECT_NE(run.err.find("fdrill: ["), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("faults: cap@127.1.0.2"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("hosts file "), std::string::npos) << run.err;

  std::ifstream sin(out / "summary.json");
  json s = json::parse(sin);
  ASSERT_EQ(s["faults"].size(), 1u) << s.dump(2);
  const json& f = s["faults"][0];
  EXPECT_EQ(f["node"], "127.1.0.2");
  EXPECT_GT(f["slowdown"].get<double>(), 5.0) << f.dump(2);
  EXPECT_NEAR(s["baseline"]["busbw_median"].get<double>(), 37.74, 0.01) << s["baseline"].dump(2);
  EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump(2);
  // The job kept going under the cap; the drill's SIGTERM at the end is not
  // the job failing (a forced exit), and a TCP job gets no NCCL prediction.
  EXPECT_EQ(f["job_outcome"], "rode_through") << f.dump(2);
  EXPECT_TRUE(f["predicted_job"].is_null()) << f.dump(2);

  // Every row became a metrics record marked as nccl-tests'.
  std::ifstream min(out / "metrics.jsonl");
  std::string line;
  int records = 0;
  while (std::getline(min, line)) {
    json r = json::parse(line);
    EXPECT_EQ(r["source"], "nccl-tests");
    ++records;
  }
  EXPECT_GT(records, 60);  // ~20 rows/s for ~9 s

  // The events: the launch on this host, apply/revert on the named agent, a forced stop.
  std::ifstream ein(out / "events.jsonl");
  std::string events((std::istreambuf_iterator<char>(ein)), std::istreambuf_iterator<char>());
  EXPECT_NE(events.find("\"type\":\"workload_start\""), std::string::npos);
  EXPECT_NE(events.find("\"node\":\"controller\""), std::string::npos);
  EXPECT_NE(events.find("\"fault_reverted\""), std::string::npos);
  EXPECT_NE(events.find("\"forced\":true"), std::string::npos);
  EXPECT_EQ(events.find("workload_failed"), std::string::npos) << events;
  // What it ran on: every agent's inventory.
  std::ifstream iin(out / "inventory.json");
  json inv = json::parse(iin);
  ASSERT_EQ(inv["nodes"].size(), 4u);
  EXPECT_EQ(inv["nodes"][1]["node"], "127.1.0.2");
  EXPECT_EQ(inv["nodes"][1]["hcas"][0]["name"], "mlx5_0") << inv["nodes"][1].dump(2);
  // ... and the switches of the topology file, each node's fab0 and the
  // HCA port under it one cable of its leaf (the report's fabric map and
  // the culprit read them).
  ASSERT_EQ(inv["switches"].size(), 2u) << inv.dump(2);
  EXPECT_EQ(inv["switches"][0]["name"], "leaf0");
  std::vector<std::pair<std::string, std::string>> leaf0;
  for (const json& p : inv["switches"][0]["ports"]) leaf0.emplace_back(p["name"], p["to"]);
  EXPECT_EQ(leaf0, (std::vector<std::pair<std::string, std::string>>{
                       {"127.1.0.1/fab0", "127.1.0.1:fab0"},
                       {"127.1.0.1/fab0", "127.1.0.1:ib/mlx5_0/1"},
                       {"127.1.0.2/fab0", "127.1.0.2:fab0"},
                       {"127.1.0.2/fab0", "127.1.0.2:ib/mlx5_0/1"}}))
      << inv["switches"][0].dump(2);
  // Each cable at the rate its node end came up at (the fake HCA port's
  // 100 Gb/s, fab0's 100000 Mb/s): what utilisation is measured against.
  for (const json& p : inv["switches"][0]["ports"])
    EXPECT_EQ(p["rate_bps"], 100e9) << inv["switches"][0].dump(2);
  std::ifstream hin(out / "hostfile");
  std::string hostfile((std::istreambuf_iterator<char>(hin)), std::istreambuf_iterator<char>());
  EXPECT_EQ(hostfile,
            "127.1.0.1 slots=1\n127.1.0.2 slots=1\n127.1.0.3 slots=1\n127.1.0.4 slots=1\n");
  // Each agent watched RAS: it answered healthy, then saw the missing
  // process; the report says which detector noticed the fault when.
  EXPECT_NE(events.find("\"type\":\"ras\""), std::string::npos) << events;
  EXPECT_NE(events.find("\"missing\":1"), std::string::npos) << events;
  ASSERT_EQ(f["detectors"].size(), 2u) << f.dump(2);
  EXPECT_EQ(f["detectors"][0]["detector"], "fdrill");
  EXPECT_EQ(f["detectors"][1]["detector"], "nccl_ras");
  ASSERT_TRUE(f["detectors"][1]["after_s"].is_number()) << f.dump(2);
  EXPECT_LT(f["detectors"][1]["after_s"].get<double>(), 3.0) << f.dump(2);
  EXPECT_NE(f["detectors"][1]["what"].get<std::string>().find("1 process missing"),
            std::string::npos)
      << f.dump(2);
  EXPECT_FALSE(f["first_detector"].is_null()) << f.dump(2);
  // The agents made the run's /tmp/fdrill-<run> and removed it at the end.
  EXPECT_EQ(RunDirs(), dirs_before);
  EXPECT_EQ(events.find("run_dir_kept"), std::string::npos);
}

// Issue 50: a launcher of the job's own (torchrun, a site's wrapper:
// launcher: none) whose output carries the trainer's step lines — here
// Megatron-LM's, a step every 50 ms, ten times as long between 3.3 s and
// 5.7 s — is measured step by step on the controller's host: steps/s, the
// fault's step-time slowdown, the records the job's own.
TEST_F(ClusterDrill, ALauncherOfItsOwnIsMeasuredByItsStepLines) {
  std::ofstream(work_ / "fake_train.sh") << R"(#!/bin/sh
start=$(date +%s%N)
step=0
while :; do
  t=$(( ($(date +%s%N) - start) / 1000000 ))
  step=$((step + 1))
  if [ $t -ge 3300 ] && [ $t -lt 5700 ]; then ms=500.0; sleep 0.5; else ms=50.0; sleep 0.05; fi
  echo " iteration $step/ 100000 | consumed samples: $((step * 8)) | elapsed time per iteration (ms): $ms | lm loss: 2.5E+00 |"
done
)";
  std::string text;
  {
    std::ifstream in(work_ / "drill.yaml");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string from = "workload: {command: [sh, " + (work_ / "fake_perf.sh").string() +
                           "], output: nccl-tests, launcher: none, transport: tcp}";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(),
               "workload: {command: [sh, " + (work_ / "fake_train.sh").string() +
                   "], metrics: megatron, launcher: none, transport: tcp}");
  std::ofstream(work_ / "drill.yaml") << text;
  const ProcessResult run = RunDrill(120);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;  // 10x: max_slowdown 2 fails
  EXPECT_NE(run.err.find("ms a step"), std::string::npos) << run.err;
  std::ifstream sin(work_ / "run" / "summary.json");
  json s = json::parse(sin);
  EXPECT_EQ(s["rate_unit"], "steps/s");
  ASSERT_EQ(s["faults"].size(), 1u) << s.dump(2);
  // Its steps ten times as long for 2.4 s of the fault's 3 s (where they
  // fall in it moves with the job's start): 4.5x-6x seen.
  EXPECT_GT(s["faults"][0]["slowdown"].get<double>(), 3.0) << s["faults"][0].dump(2);
  // ~50 ms steps: about 19 a second (the shell's own time on top).
  EXPECT_GT(s["baseline"]["busbw_median"].get<double>(), 10.0) << s["baseline"].dump(2);
  EXPECT_LT(s["baseline"]["busbw_median"].get<double>(), 20.5) << s["baseline"].dump(2);
  std::ifstream min(work_ / "run" / "metrics.jsonl");
  int steps = 0;
  for (std::string line; std::getline(min, line);) {
    json r = json::parse(line);
    EXPECT_EQ(r["op"], "step");
    EXPECT_EQ(r["timed_by_job"], true);
    ++steps;
  }
  EXPECT_GT(steps, 60);
  RealProcessRunner runner;
  auto left =
      runner.Run({"pgrep", "-f", (work_ / "fake_train.sh").string()}, std::chrono::seconds(5));
  EXPECT_TRUE(left.ok() && left->out.empty()) << "the job outlived the drill";
}

// `fdrill inventory --topology`: the operator's check of how fdrill reads
// the fabric for these nodes, before a drill relies on it; a file with an
// error stops it naming the file's line.
TEST_F(ClusterDrill, InventoryWithATopologyListsItsLeavesForTheseNodesAndABadOneNamesItsLine) {
  std::ofstream(work_ / "topology.yaml") << R"(rails:
  rail0: {devices: [mlx5_0], interfaces: [fab0]}
leaves:
  leaf0: {nodes: "127.1.0.[1-2]", rails: [rail0]}
  leaf9: {nodes: "127.9.0.[1-2]"}
)";
  RealProcessRunner runner;
  auto inventory = [&](const std::string& topology) {
    auto r = runner.Run({FDRILL_BIN, "inventory", "--hosts", (work_ / "hosts").string(), "--port",
                         std::to_string(port_), "--insecure", "--topology", topology},
                        std::chrono::seconds(60));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ProcessResult{};
  };
  const ProcessResult good = inventory((work_ / "topology.yaml").string());
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find("leaf0"), std::string::npos) << good.out;
  EXPECT_NE(good.out.find("127.1.0.2/fab0 -> 127.1.0.2:ib/mlx5_0/1"), std::string::npos)
      << good.out;
  EXPECT_EQ(good.out.find("leaf9"), std::string::npos) << "no node of it here: " << good.out;

  std::ofstream(work_ / "bad.yaml") << "rails:\n  rail0: {devices: [mlx5_0]}\nleaves:\n"
                                    << "  leaf0: {nodes: \"127.1.0.[1-2]\", rails: [rail9]}\n";
  const ProcessResult bad = inventory((work_ / "bad.yaml").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find((work_ / "bad.yaml").string() + ":4:"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("rail9"), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty()) << bad.out;
}

TEST_F(ClusterDrill, AnAgentThatIsNotThereStopsTheDrillBeforeAnythingIsTouched) {
  std::ofstream(work_ / "hosts") << "127.1.0.[1-4]\n127.1.0.9\n";
  const ProcessResult run = RunDrill(60);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("127.1.0.9"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(work_ / "run" / "events.jsonl"));
}

// The same drill as NCCL runs it by default, over RDMA (workload.transport
// auto: rdma for nccl-tests): the cap on fab0 is tc, which RoCE verbs never
// pass through. The agent's check refuses it before anything is touched,
// naming the kinds that reach the RoCE port.
TEST_F(ClusterDrill, ATcFaultOnARoceNetdevUnderAnRdmaWorkloadIsRefusedNamingTheKindsThatReachIt) {
  std::ifstream in(work_ / "drill.yaml");
  std::string drill((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string tcp = ", transport: tcp";
  ASSERT_NE(drill.find(tcp), std::string::npos);
  drill.erase(drill.find(tcp), tcp.size());
  std::ofstream(work_ / "drill.yaml") << drill;
  const ProcessResult run = RunDrill(60);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("127.1.0.2"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("fault cap: link_rate on fab0 reaches kernel TCP/IP (incl. IPoIB) only"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("mlx5_0 port 1 (Ethernet)"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("Kinds that reach RoCE RDMA: link_flap, link_down"), std::string::npos)
      << run.err;
  EXPECT_FALSE(fs::exists(work_ / "run" / "events.jsonl"));
  // Nothing was applied: no agent's audit log holds an apply.
  for (int i = 1; i <= 4; ++i) {
    std::ifstream audit(work_ / ("agent" + std::to_string(i)) / "audit.jsonl");
    const std::string text((std::istreambuf_iterator<char>(audit)),
                           std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("\"apply\""), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace fdrill

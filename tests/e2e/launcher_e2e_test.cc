// Real launchers on the emulated fabric: the path a cluster takes, with the
// engines a cluster has. `fdrill fabric up --sshd --slurm` runs OpenSSH's
// sshd and Slurm's slurmd in every node (slurmctld and munged on the
// controller side); the drill names its nodes in a hosts file (fabric: {hosts}),
// dials their agents by name and launches with `mpirun` over ssh
// (plm_rsh_agent "ssh -F <fabric ssh config>") from the controller's side,
// exactly as the README's "Running on a real cluster" says. The names
// resolve as a cluster's DNS would: `fdrill run` runs in a mount namespace
// of its own with the fabric's hosts file bound over /etc/hosts (nothing of
// the machine's /etc/hosts changes). Needs root.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/e2e_cli.h"
#include "tests/support/json_lines.h"
#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

using e2e::Fdrill;
using e2e::ReadJson;
using e2e::Sh;

constexpr char kFabric[] = "/run/fdrill/fabric";

class LauncherE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces (CI runs as root)";
    ASSERT_FALSE(fs::exists(std::string(kFabric) + "/fabric.json"))
        << "an emulated fabric is already up; this test will not tear down someone's fabric. "
           "Run `fdrill fabric down` first.";
    work_ = ScratchPath("fdrill-launcher-");
    fs::create_directories(work_);
    auto up = Fdrill({"fabric", "up", "--nodes", "4", "--sshd", "--slurm"}, 180);
    ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
    up_ = true;
  }
  void TearDown() override {
    if (up_) {
      auto down = Fdrill({"fabric", "down"});
      EXPECT_EQ(down.exit_code, 0) << down.out << down.err;
      EXPECT_EQ(Sh({"ip", "netns", "list"}).find("fdrill-"), std::string::npos)
          << "namespaces left behind";
      EXPECT_EQ(Sh({"pgrep", "-f", std::string(kFabric) + "/ssh/sshd_config"}), "")
          << "an sshd left behind";
    }
    if (!work_.empty()) fs::remove_all(work_);
  }

  // `[PREFIX...] fdrill ARGS` where n0..n3 resolve: its own mount
  // namespace, the fabric's hosts file over /etc/hosts.
  static ProcessResult FdrillWithNames(const std::vector<std::string>& args, int timeout_s,
                                       const std::string& prefix = "exec") {
    std::string command = std::string("mount --bind ") + kFabric + "/ssh/hosts /etc/hosts && " +
                          prefix + " " + FDRILL_BIN;
    for (const auto& a : args) command += " '" + a + "'";
    RealProcessRunner runner;
    auto r =
        runner.Run({"unshare", "--mount", "sh", "-c", command}, std::chrono::seconds(timeout_s));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ProcessResult{};
  }

  // `env` words for a drill launched by srun on the fabric's Slurm: its
  // SLURM_CONF, and Open MPI over the fabric's subnet (the ranks get it
  // through srun's default --export=ALL).
  static std::string SrunEnv() {
    return std::string("SLURM_CONF=") + kFabric +
           "/slurm/slurm.conf OMPI_MCA_btl=self,tcp OMPI_MCA_pml=ob1 OMPI_MCA_rtc=^hwloc "
           "OMPI_MCA_btl_tcp_if_include=198.18.0.0/24";
  }

  // A drill of one capped link that must pass: verdict pass, residue 0,
  // data intact, the fault's slowdown at least 2, and every rank of every
  // node reported (one rank file per host). Prints the drill's row as
  // `label: ...` (for the closing notes and docs; ctest -V shows it) and
  // returns events.jsonl's text.
  static std::string ExpectCappedDrillPassed(const fs::path& out, const std::string& label) {
    json s = ReadJson(out / "summary.json");
    EXPECT_EQ(s["verdict"], "pass") << s.dump(2);
    EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
    EXPECT_TRUE(s["rollback"]["data_intact"].get<bool>()) << s.dump(2);
    EXPECT_EQ(s["faults"].size(), 1u) << s.dump(2);
    if (s["faults"].size() == 1 && s["faults"][0]["slowdown"].is_number()) {
      EXPECT_GE(s["faults"][0]["slowdown"].get<double>(), 2.0) << s["faults"][0].dump();
      std::cout << label << ": verdict " << s["verdict"] << ", slowdown "
                << s["faults"][0]["slowdown"] << ", time to recover "
                << s["faults"][0]["time_to_recover_s"] << " s, residue " << s["residue"].size()
                << "\n";
    } else {
      ADD_FAILURE() << "no slowdown measured: " << s.dump(2);
    }
    std::set<int> ranks;
    for (const json& m : ReadJsonLines((out / "metrics.jsonl").string()))
      ranks.insert(m["rank"].get<int>());
    EXPECT_EQ(ranks, (std::set<int>{0, 1, 2, 3}));
    std::ifstream ev(out / "events.jsonl");
    return std::string((std::istreambuf_iterator<char>(ev)), std::istreambuf_iterator<char>());
  }

  // /tmp/fdrill-<run>.<host>: the ranks' JSONL on a hosts fabric.
  static std::set<std::string> RunDirs() {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator("/tmp")) {
      const std::string name = e.path().filename().string();
      if (name.rfind("fdrill-", 0) == 0 && name.find(".n") != std::string::npos) out.insert(name);
    }
    return out;
  }

  fs::path work_;
  bool up_ = false;
  std::set<std::string> dirs_before_ = RunDirs();
};

// The mpirun line a cluster operator writes for Open MPI over TCP: the
// fabric's subnet for MPI traffic, the management subnet for Open MPI's own.
constexpr char kSshMpirunDrill[] = R"(name: sshd-mpirun
fabric:
  hosts: nodes.hosts
workload:
  op: all_reduce
  size: 1M
  ranks_per_node: 1
  launcher: mpirun
  rsh_agent: ssh -F /run/fdrill/fabric/ssh/config
  launcher_args: [--allow-run-as-root, --bind-to, none, --mca, rtc, ^hwloc, --mca, pml, ob1,
                  --mca, btl, "self,tcp", --mca, btl_tcp_if_include, 198.18.0.0/24,
                  --mca, oob_tcp_if_include, 198.19.0.0/24]
phases:
  - name: baseline
    duration: 8s
  - name: slow-link
    duration: 6s
    faults:
      - id: slow-link
        kind: link_rate
        node: n1
        params: {interface: fab0, rate: 50mbit}
  - name: recovery
    duration: 8s
safety:
  lease_ttl: 10s
  max_faulted_nodes: 1
expect:
  no_residue: true
  data_intact: true
)";

TEST_F(LauncherE2E, MpirunOverRealSshdRunsAHostsFileDrillAndLeavesNothing) {
  std::ofstream(work_ / "nodes.hosts") << "n[0-3]\n";
  std::ofstream(work_ / "drill.yaml") << kSshMpirunDrill;
  const fs::path out = work_ / "run";
  auto run = FdrillWithNames({"run", (work_ / "drill.yaml").string(), "--out", out.string(),
                              "--tls-dir", std::string(kFabric) + "/pki", "--quiet"},
                             240);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  // The job went out over ssh: the launch line names the fabric's config.
  EXPECT_NE(
      ExpectCappedDrillPassed(out, "mpirun over sshd").find("ssh -F /run/fdrill/fabric/ssh/config"),
      std::string::npos);
  // Nothing of the job is left on a node (what runs there is its agent and
  // its sshd), nor a host's run directory (/tmp/fdrill-<run>.<host>).
  for (int i = 0; i < 4; ++i) {
    std::istringstream pids(Sh({"ip", "netns", "pids", "fdrill-n" + std::to_string(i)}));
    std::multiset<std::string> programs;
    for (std::string pid; pids >> pid;) {
      std::ifstream comm("/proc/" + pid + "/comm");
      std::string name;
      std::getline(comm, name);
      if (!name.empty()) programs.insert(name);
    }
    EXPECT_EQ(programs, (std::multiset<std::string>{"fdrill-agent", "sshd", "slurmd"})) << "n" << i;
  }
  EXPECT_EQ(RunDirs(), dirs_before_);
}

// The same drill with Slurm's launcher: the fabric's Slurm (slurmctld on
// the controller side, a slurmd in every node), `salloc -N4` around `fdrill
// run`, the job started with `srun --mpi=pmix` inside the allocation, as on
// a cluster whose MPI is Open MPI with PMIx.
constexpr char kSrunDrill[] = R"(name: slurm-srun
fabric:
  slurm: true
workload:
  op: all_reduce
  size: 1M
  ranks_per_node: 1
  launcher: srun
  launcher_args: [--mpi=pmix]
phases:
  - name: baseline
    duration: 8s
  - name: slow-link
    duration: 6s
    faults:
      - id: slow-link
        kind: link_rate
        node: n2
        params: {interface: fab0, rate: 50mbit}
  - name: recovery
    duration: 8s
safety:
  lease_ttl: 10s
  max_faulted_nodes: 1
expect:
  no_residue: true
  data_intact: true
)";

TEST_F(LauncherE2E, SrunInARealSallocAllocationRunsTheDrillAndLeavesNothing) {
  std::ofstream(work_ / "drill.yaml") << kSrunDrill;
  const fs::path out = work_ / "run";
  auto run = FdrillWithNames({"run", (work_ / "drill.yaml").string(), "--out", out.string(),
                              "--tls-dir", std::string(kFabric) + "/pki", "--quiet"},
                             240, "exec env " + SrunEnv() + " salloc -N4");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::string events = ExpectCappedDrillPassed(out, "srun in salloc");
  EXPECT_NE(events.find("\"srun\""), std::string::npos);
  EXPECT_NE(events.find("--nodelist=n[0-3]"), std::string::npos);
  // The allocation ended with the drill: every node idle again.
  RealProcessRunner runner;
  auto sinfo = runner.Run({"env", std::string("SLURM_CONF=") + kFabric + "/slurm/slurm.conf",
                           "sinfo", "--noheader", "--Node", "--format", "%N %t"},
                          std::chrono::seconds(10));
  ASSERT_TRUE(sinfo.ok());
  EXPECT_EQ(sinfo->out, "n0 idle\nn1 idle\nn2 idle\nn3 idle\n");
  EXPECT_EQ(RunDirs(), dirs_before_);
}

}  // namespace
}  // namespace fdrill

namespace fdrill {
namespace {

// What Slurm does under a fault: n1's slurmd hangs (daemon_pause: SIGSTOP)
// for 30 s while the drill's job runs under srun. slurmctld stops hearing
// n1 and marks it not responding ("*"; DOWN once SlurmdTimeout has passed
// at one of its checks); the drill records each change of what Slurm said
// (slurm_node, slurm_job events; summary.json's slurm[]; the report's "What
// Slurm did"), and once the fault is reverted (SIGCONT) the node answers
// again and Slurm takes it back by itself.
constexpr char kSlurmdHangDrill[] = R"(name: slurmd-hang
fabric:
  slurm: true
workload:
  op: all_reduce
  size: 1M
  ranks_per_node: 1
  launcher: srun
  launcher_args: [--mpi=pmix]
phases:
  - name: baseline
    duration: 6s
  - name: slurmd-hang
    duration: 30s
    faults:
      - id: hang
        kind: daemon_pause
        node: n1
        params: {daemon: slurmd}
  - name: after
    duration: 5s
safety:
  lease_ttl: 10s
  max_faulted_nodes: 1
)";

TEST_F(LauncherE2E, AHungSlurmdIsSeenBySlurmAndTheDrillRecordsWhatSlurmDid) {
  std::ofstream(work_ / "drill.yaml") << kSlurmdHangDrill;
  const fs::path out = work_ / "run";
  // No salloc: srun makes the job's own allocation, so Slurm ending it on
  // a DOWN node would end the job, not `fdrill run`.
  auto run = FdrillWithNames({"run", (work_ / "drill.yaml").string(), "--out", out.string(),
                              "--tls-dir", std::string(kFabric) + "/pki", "--quiet"},
                             240, "exec env SLURM_JOB_NODELIST=n[0-3] " + SrunEnv());
  EXPECT_NE(run.exit_code, 2) << run.out << run.err;
  json s = ReadJson(out / "summary.json");
  EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
  std::optional<double> lost_at, applied_at;
  for (const json& f : s["faults"])
    if (f["id"] == "hang" && f["applied_at_s"].is_number()) applied_at = f["applied_at_s"];
  std::string said;
  for (const json& c : s["slurm"]) {
    said += c["text"].get<std::string>() + "\n";
    const std::string to = c["to"].get<std::string>();
    if (c.value("node", "") == "n1" && (to.back() == '*' || to.rfind("down", 0) == 0) && !lost_at)
      lost_at = c["t"].get<double>();
  }
  ASSERT_TRUE(applied_at.has_value()) << s.dump(2);
  ASSERT_TRUE(lost_at.has_value()) << "Slurm never said n1 stopped responding:\n" << said;
  EXPECT_GT(*lost_at, *applied_at) << said;
  std::cout << "slurmd hang on n1: Slurm marked it not responding " << (*lost_at - *applied_at)
            << " s after the fault; what Slurm said:\n"
            << said;
  std::ifstream md(out / "report.md");
  const std::string report((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("## What Slurm did"), std::string::npos);
  // Reverted: n1's slurmd runs again and Slurm takes the node back.
  RealProcessRunner runner;
  std::string state;
  for (int i = 0; i < 60 && state != "idle"; ++i) {
    auto sinfo = runner.Run({"env", std::string("SLURM_CONF=") + kFabric + "/slurm/slurm.conf",
                             "sinfo", "--noheader", "--Node", "--nodes", "n1", "--format", "%T"},
                            std::chrono::seconds(10));
    state = sinfo.ok() ? sinfo->out.substr(0, sinfo->out.find('\n')) : "";
    if (state != "idle") std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_EQ(state, "idle");
}

// An ssh host that refuses: the drill stops before any agent is leased or
// anything applied, exit 2, naming every host and what ssh said.
TEST_F(LauncherE2E, AnSshThatIsRefusedStopsTheDrillBeforeAnythingIsTouched) {
  std::string drill = kSshMpirunDrill;
  const std::string agent = "rsh_agent: ssh -F /run/fdrill/fabric/ssh/config";
  drill.replace(drill.find(agent), agent.size(), agent + " -o Port=2222");
  std::ofstream(work_ / "nodes.hosts") << "n[0-3]\n";
  std::ofstream(work_ / "drill.yaml") << drill;
  auto run =
      FdrillWithNames({"run", (work_ / "drill.yaml").string(), "--out", (work_ / "run").string(),
                       "--tls-dir", std::string(kFabric) + "/pki", "--quiet"},
                      120);
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("4 of 4 hosts refused `ssh -F /run/fdrill/fabric/ssh/config -o "
                         "Port=2222 HOST true`"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("n2: ssh: connect to host 198.19.0.3 port 2222: Connection refused"),
            std::string::npos)
      << run.err;
  // No agent saw a lease or a fault: their audit logs hold nothing of it.
  for (int i = 0; i < 4; ++i) {
    const std::string state = std::string(kFabric) + "/n" + std::to_string(i) + "/state";
    ASSERT_TRUE(fs::is_directory(state)) << state;  // where the agent audits
    std::ifstream audit(state + "/audit.jsonl");
    const std::string text((std::istreambuf_iterator<char>(audit)),
                           std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("\"lease\""), std::string::npos) << "n" << i << ": " << text;
  }
}

}  // namespace
}  // namespace fdrill

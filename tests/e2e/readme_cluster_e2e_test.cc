// The guide's "Running on a real cluster" (docs/guide/04-real-cluster.md;
// it was the README's, hence the test's name), run as written on the
// emulated fabric, so that it cannot drift from what runs. `fdrill fabric up
// --no-agents --sshd --slurm` gives four nodes with sshd and slurmd, no
// agents of the fabric's own, and each node its own /etc/fdrill and
// /var/lib/fdrill (what a node's disk would hold). The test takes every
// ```sh block of steps 2 to 6 from that section and runs them in order, in one
// shell inside `salloc -N4`, as the controller host would:
//   - certificates made in the controller's /etc/fdrill/pki (a directory of
//     the test's, bound there in a mount namespace of its own) and copied to
//     every node with ssh/scp;
//   - the agents started as the guide's Slurm step, reading each node's
//     /etc/fdrill/agent.conf;
//   - the inventory, then validate/plan/run of a drill with each launcher
//     (mpirun over ssh, srun in the allocation).
// What the test does itself is what the guide leaves to prose or to step 1
// (kSubstitutions and Prelude below say each): the package's agent.conf
// with `listen` set on each node, the node names, ssh's config, the drill
// files. A block that fails fails the test with the shell's trace. Needs root.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

constexpr char kFabric[] = "/run/fdrill/fabric";
constexpr int kNodes = 4;

// A ```sh block of the section and the step (1., 2., ...) it is under.
struct Block {
  int step = 0;
  std::string text;
};

// The ```sh blocks of the guide's "## Running on a real cluster".
std::vector<Block> ClusterSectionBlocks(const fs::path& guide) {
  std::ifstream in(guide);
  std::vector<Block> blocks;
  bool in_section = false, in_block = false;
  int step = 0;
  const std::regex step_line(R"(^(\d+)\. \*\*)");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) {
      in_section = line == "## Running on a real cluster";
      continue;
    }
    if (!in_section) continue;
    std::smatch m;
    if (!in_block && std::regex_search(line, m, step_line)) step = std::stoi(m[1]);
    const std::string trimmed = line.substr(std::min(line.find_first_not_of(' '), line.size()));
    if (!in_block && trimmed == "```sh") {
      in_block = true;
      blocks.push_back({step, ""});
    } else if (in_block && trimmed == "```") {
      in_block = false;
    } else if (in_block) {
      blocks.back().text += trimmed + "\n";
    }
  }
  return blocks;
}

// What differs between the guide's cluster and this fabric. Each must
// match in the section (a guide that no longer says it has drifted).
struct Substitution {
  std::string pattern;  // ECMAScript regex
  std::string replacement;
  std::string why;
};
const std::vector<Substitution>& Substitutions() {
  static const std::vector<Substitution> subs = {
      {R"(gpu\[001-128\])", "n[0-3]", "the fabric's node names"},
      {R"((^|[\s;(])(ssh|scp) )", std::string("$1$2 -F ") + kFabric + "/ssh/config ",
       "ssh to the nodes with the fabric's keys and known_hosts"},
  };
  return subs;
}

// Open MPI over the fabric's subnet, as a cluster's site config would say
// (srun passes it to the ranks).
constexpr char kMpiEnv[] =
    "export OMPI_MCA_btl=self,tcp OMPI_MCA_pml=ob1 OMPI_MCA_rtc=^hwloc "
    "OMPI_MCA_btl_tcp_if_include=198.18.0.0/24\n";

// Debian 12's Open MPI 4.1.4 sometimes kills a rank inside MPI_Init when
// the box is loaded: its TCP BTL receives a fragment of tag 0x41 (ob1's
// MATCH) before ob1's callback for it is set, and calls a null pointer
// (core dump, 2026-12-06: mca_btl_tcp.so -> *(mca_btl_base_active_message_
// trigger + 65) == 0, under opal_progress in ompi_mpi_init). Measured
// here with both cores busy: 1 of 30 and 1 of 40 `srun --mpi=pmix`
// launches of fdrill-collective; CI's run of ae3e241 met it once. fdrill
// reports it as it should (verdict error: "the workload exited ... before
// every rank reported", the segfault in workload.log), but it is the MPI
// library's, not the guide's: such a run (no fault applied, a rank dead
// of SIGSEGV, a launch that never reported) is set aside in
// failed-launches/ and the drill run once more. Anything else fails.
constexpr char kRelaunchOnMpiInitCrash[] = R"(fdrill() {
  local rc=0
  command fdrill "$@" || rc=$?
  [ "$rc" -eq 2 ] && [ "$1" = run ] || return $rc
  local last
  last=$(ls -td runs/*/ | head -1)
  grep -q "Segmentation fault" "$last/workload.log" && grep -q '"faults": \[\]' "$last/summary.json" &&
    grep -q "before every rank reported" "$last/summary.json" || return $rc
  echo "readme test: $last: a rank died in MPI_Init (Open MPI 4.1.4's TCP BTL); running it once more" >&2
  mkdir -p failed-launches && mv "$last" failed-launches/
  command fdrill "$@"
}
)";

std::string Drill(const std::string& name, const std::string& fabric, const std::string& launcher) {
  return "name: " + name + "\nfabric: " + fabric + "\n" + R"(workload:
  op: all_reduce
  size: 1M
  ranks_per_node: 1
)" + launcher +
         R"(phases:
  - {name: baseline, duration: 5s}
  - name: slow-link
    duration: 4s
    faults:
      - {id: slow-link, kind: link_rate, node: n1, params: {interface: fab0, rate: 50mbit}}
  - {name: recovery, duration: 5s}
safety:
  lease_ttl: 10s
  max_faulted_nodes: 1
expect:
  no_residue: true
  data_intact: true
)";
}

// /tmp/fdrill-<run>.<host>: the ranks' JSONL on a hosts fabric.
std::set<std::string> RankDirs() {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator("/tmp")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("fdrill-", 0) == 0 && name.find(".n") != std::string::npos) out.insert(name);
  }
  return out;
}

// The programs running in node `i`'s network namespace.
std::multiset<std::string> ProgramsIn(int i) {
  std::istringstream pids(Sh({"ip", "netns", "pids", "fdrill-n" + std::to_string(i)}));
  std::multiset<std::string> programs;
  for (std::string pid; pids >> pid;) {
    std::ifstream comm("/proc/" + pid + "/comm");
    std::string name;
    std::getline(comm, name);
    if (!name.empty()) programs.insert(name);
  }
  return programs;
}

// The last `n` lines of a file, each indented, under a heading.
std::string Tail(const fs::path& file, size_t n) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out = "\n" + file.string() + " (last " + std::to_string(n) + " lines):";
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    out += "\n  " + lines[i];
  return out;
}

// Why a drill did not pass, short enough to survive a log's truncation:
// the summary's errors, the last lines of each log in its run dir (the
// workload's says why a launch failed), and Slurm's logs (why a step did).
std::string Why(const fs::path& run, const json& summary) {
  std::string out = "errors:";
  for (const json& e : summary.value("errors", json::array())) out += "\n  " + e.dump();
  for (const auto& f : fs::directory_iterator(run)) {
    if (f.path().extension() == ".log") out += Tail(f.path(), 30);
  }
  out += Tail(fs::path(kFabric) / "slurm/slurmctld.log", 15);
  for (int i = 0; i < kNodes; ++i)
    out += Tail(fs::path(kFabric) / ("n" + std::to_string(i)) / "slurmd.log", 15);
  return out;
}

class ReadmeCluster : public e2e::FabricTest {
 protected:
  void SetUp() override {
    etc_existed_ = fs::exists("/etc/fdrill");
    named_ = false;  // the guide's commands name the default fabric's paths
    BringUp("fdrill-readme-",
            {"--nodes", std::to_string(kNodes), "--no-agents", "--sshd", "--slurm"}, 180);
    if (IsSkipped() || HasFatalFailure()) return;
    fs::create_directories(work_ / "controller-etc");
  }
  void TearDown() override {
    const bool was_up = up_;
    FabricTest::TearDown();
    if (was_up) {
      EXPECT_EQ(fs::exists("/etc/fdrill"), etc_existed_) << "/etc/fdrill made and left";
    }
  }

  // Step 1's package on every node: its agent.conf, with step 3's edit
  // (`listen` = the node's management address).
  void InstallAgentConf() {
    std::ifstream in(fs::path(FDRILL_SOURCE_DIR) / "packaging/agent.conf");
    const std::string conf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(conf.empty());
    for (int i = 0; i < kNodes; ++i) {
      const fs::path etc = fs::path(kFabric) / ("n" + std::to_string(i)) / "root/etc/fdrill";
      ASSERT_TRUE(fs::is_directory(etc)) << etc << ": the node has no /etc/fdrill of its own";
      std::ofstream(etc / "agent.conf") << conf << "\nlisten = \"198.19.0." << i + 1 << ":7100\"\n";
    }
  }

  bool etc_existed_ = false;
  std::set<std::string> rank_dirs_before_ = RankDirs();
};

TEST_F(ReadmeCluster, TheRealClusterSectionRunsAsWrittenOnTheFabric) {
  const fs::path guide = fs::path(FDRILL_SOURCE_DIR) / "docs/guide/04-real-cluster.md";
  const std::vector<Block> blocks = ClusterSectionBlocks(guide);
  ASSERT_FALSE(blocks.empty()) << guide << " has no \"## Running on a real cluster\" blocks";
  InstallAgentConf();
  std::ofstream(work_ / "mpirun.yaml")
      << Drill("readme-mpirun", "{hosts: cluster.hosts}",
               std::string("  launcher: mpirun\n  rsh_agent: ssh -F ") + kFabric +
                   "/ssh/config\n"
                   "  launcher_args: [--allow-run-as-root, --bind-to, none, --mca, plm, rsh,\n"
                   "                  --mca, oob_tcp_if_include, 198.19.0.0/24]\n");
  std::ofstream(work_ / "srun.yaml")
      << Drill("readme-srun", "{slurm: true}", "  launcher: srun\n  launcher_args: [--mpi=pmix]\n");

  // The controller's shell: the guide's blocks in order, step 6's once
  // per launcher; after step 3's agent step, its pid and a wait until every
  // agent listens; at the end the step is ended (SIGTERM: each reverts).
  std::string script = "set -ex\n" + std::string(kMpiEnv) + kRelaunchOnMpiInitCrash;
  std::vector<int> used(Substitutions().size(), 0);
  std::set<int> ran_steps;
  for (const Block& b : blocks) {
    if (b.step == 1) continue;  // building and installing the package: deb_test
    std::string text = b.text;
    for (size_t i = 0; i < Substitutions().size(); ++i) {
      const std::regex re(Substitutions()[i].pattern, std::regex::multiline);
      if (std::regex_search(text, re)) ++used[i];
      text = std::regex_replace(text, re, Substitutions()[i].replacement);
    }
    ran_steps.insert(b.step);
    if (b.step == 6) {
      for (const char* drill : {"mpirun.yaml", "srun.yaml"})
        script += std::string("cp ") + drill + " my-drill.yaml\n" + text;
      continue;
    }
    script += text;
    if (b.step == 3) {
      script += "agents=$!\n";
      for (int i = 0; i < kNodes; ++i) {
        script += "timeout 30 sh -c 'until ssh -F " + std::string(kFabric) + "/ssh/config n" +
                  std::to_string(i) +
                  " ss -Hltn sport = :7100 | grep -q LISTEN; do sleep 0.2; done'\n";
      }
    }
  }
  script += "kill $agents\nwait $agents || true\n";
  for (size_t i = 0; i < used.size(); ++i)
    EXPECT_GT(used[i], 0) << guide << "'s cluster section no longer matches /"
                          << Substitutions()[i].pattern << "/ (" << Substitutions()[i].why
                          << "): update the section or this test";
  // Certificates, agents, inventory, plan-and-run: each has its block.
  for (int step : {2, 3, 4, 6})
    ASSERT_TRUE(ran_steps.count(step)) << "no ```sh block in step " << step << ":\n" << script;
  std::ofstream(work_ / "readme.sh") << script;

  // The controller host: its own /etc/fdrill (the test's directory), the
  // nodes' names resolving, Slurm's config, fdrill on PATH.
  const std::string bin = fs::path(FDRILL_BIN).parent_path().string();
  const std::string command =
      "mount --bind " + (work_ / "controller-etc").string() + " /etc/fdrill && mount --bind " +
      kFabric + "/ssh/hosts /etc/hosts && cd " + work_.string() + " && exec env PATH=" + bin +
      ":$PATH SLURM_CONF=" + kFabric + "/slurm/slurm.conf salloc -N" + std::to_string(kNodes) +
      " bash readme.sh";
  RealProcessRunner runner;
  auto run = runner.Run({"unshare", "--mount", "sh", "-c", command}, std::chrono::seconds(420));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->exit_code, 0) << "script:\n"
                               << script << "\nout:\n"
                               << run->out << "\nerr:\n"
                               << run->err;

  // Both drills passed, saw the capped link, heard every rank, launched as
  // the guide says, and left nothing.
  std::set<std::string> launched;
  if (fs::exists(work_ / "runs")) {
    for (const auto& e : fs::directory_iterator(work_ / "runs")) {
      json s = ReadJson(e.path() / "summary.json");
      const std::string name = s.value("name", "");
      launched.insert(name);
      EXPECT_EQ(s["verdict"], "pass") << e.path() << "\n" << s.dump(2) << "\n" << Why(e.path(), s);
      EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
      EXPECT_TRUE(s["rollback"]["data_intact"].get<bool>()) << s.dump(2);
      ASSERT_EQ(s["faults"].size(), 1u) << s.dump(2);
      const json& f = s["faults"][0];
      ASSERT_TRUE(f["slowdown"].is_number()) << "no slowdown measured: " << f.dump();
      EXPECT_GE(f["slowdown"].get<double>(), 2.0) << f.dump();
      // The drill table's row (ctest -V shows it; the guide quotes it).
      std::cout << name << ": verdict " << s["verdict"] << ", slowdown " << f["slowdown"]
                << ", time to recover " << f["time_to_recover_s"] << " s, residue "
                << s["residue"].size() << "\n";
      std::set<int> ranks;
      for (const json& m : ReadJsonLines((e.path() / "metrics.jsonl").string()))
        ranks.insert(m["rank"].get<int>());
      EXPECT_EQ(ranks, (std::set<int>{0, 1, 2, 3})) << name;
      std::ifstream ev(e.path() / "events.jsonl");
      const std::string events((std::istreambuf_iterator<char>(ev)),
                               std::istreambuf_iterator<char>());
      const std::string launch = name == "readme-mpirun"
                                     ? "ssh -F " + std::string(kFabric) + "/ssh/config"
                                     : std::string("--nodelist=n[0-3]");
      EXPECT_NE(events.find(launch), std::string::npos)
          << name << " was not launched with " << launch;
    }
  }
  EXPECT_EQ(launched, (std::set<std::string>{"readme-mpirun", "readme-srun"}));
  // A launch Open MPI killed in MPI_Init (kRelaunchOnMpiInitCrash): said,
  // with its evidence, not hidden.
  if (fs::exists(work_ / "failed-launches")) {
    for (const auto& e : fs::directory_iterator(work_ / "failed-launches")) {
      std::cout << "note: " << e.path().filename().string()
                << " was run again: a rank died in MPI_Init\n"
                << Why(e.path(), ReadJson(e.path() / "summary.json")) << "\n";
    }
  }
  EXPECT_EQ(RankDirs(), rank_dirs_before_) << "a host's run directory was left in /tmp";
  // The agents were the guide's: started from each node's own
  // /etc/fdrill/agent.conf, journalling in its own /var/lib/fdrill, serving
  // the certificate copied there, and the controller's certificate was the
  // one step 2 issued.
  for (int i = 0; i < kNodes; ++i) {
    const fs::path var = fs::path(kFabric) / ("n" + std::to_string(i)) / "root/var/lib/fdrill";
    std::ifstream audit(var / "audit.jsonl");
    const std::string text((std::istreambuf_iterator<char>(audit)),
                           std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("CN=controller"), std::string::npos) << var << ":\n" << text;
  }
  // Ending the step ended every agent, and nothing of the jobs is left on
  // a node: what runs there is its sshd and its slurmd. The allocation
  // ended with the script: every node idle again.
  EXPECT_EQ(Sh({"pgrep", "-f", "fdrill-agent --config /etc/fdrill/agent.conf"}), "");
  for (int i = 0; i < kNodes; ++i)
    EXPECT_EQ(ProgramsIn(i), (std::multiset<std::string>{"sshd", "slurmd"})) << "n" << i;
  EXPECT_EQ(Sh({"env", std::string("SLURM_CONF=") + kFabric + "/slurm/slurm.conf", "sinfo",
                "--noheader", "--Node", "--format", "%N %t"}),
            "n0 idle\nn1 idle\nn2 idle\nn3 idle\n");
}

}  // namespace
}  // namespace fdrill

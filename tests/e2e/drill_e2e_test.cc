// End-to-end: `fdrill fabric up`, `fdrill run`, and what the run directory
// says, on a real 4-node emulated fabric. Each test brings the fabric up and
// tears it down in TearDown, also when an assertion fails.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/host/real_process_runner.h"

namespace fdrill {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

ProcessResult Fdrill(std::vector<std::string> args, int timeout_s = 30) {
  RealProcessRunner runner;
  args.insert(args.begin(), FDRILL_BIN);
  auto r = runner.Run(args, std::chrono::seconds(timeout_s));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ProcessResult{};
}

std::string Sh(const std::vector<std::string>& argv) {
  RealProcessRunner runner;
  auto r = runner.Run(argv, std::chrono::seconds(10));
  return r.ok() ? r->out : "";
}

json ReadJson(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

class DrillE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces (CI runs as root)";
    ASSERT_FALSE(fs::exists("/run/fdrill/fabric/fabric.json"))
        << "an emulated fabric is already up; this test will not tear down someone's fabric. "
           "Run `fdrill fabric down` first.";
    work_ = fs::temp_directory_path() / ("fdrill-e2e-" + std::to_string(getpid()));
    fs::remove_all(work_);
    fs::create_directories(work_);
    auto up = Fdrill({"fabric", "up", "--nodes", "4"});
    ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
    up_ = true;
  }
  void TearDown() override {
    if (up_) {
      auto down = Fdrill({"fabric", "down"});
      EXPECT_EQ(down.exit_code, 0) << down.out << down.err;
      EXPECT_EQ(Sh({"ip", "netns", "list"}).find("fdrill-"), std::string::npos) << "namespaces left behind";
    }
    if (!work_.empty()) fs::remove_all(work_);
  }

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

  fs::path work_;
  bool up_ = false;
};

TEST_F(DrillE2E, QuickstartMeasuresSlowdownRecoveryAndLeavesNoResidue) {
  std::string before = FabricLinks();
  fs::path out = work_ / "run";
  auto run = Fdrill({"run", std::string(FDRILL_SOURCE_DIR) + "/scenarios/quickstart.yaml", "--out", out.string()}, 240);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* f : {"scenario.yaml", "events.jsonl", "metrics.jsonl", "summary.json", "report.md", "plan.json"}) {
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
  }
  EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
  EXPECT_TRUE(s["rollback"]["data_intact"].get<bool>());
  EXPECT_EQ(s["phases"].size(), 5u);
  EXPECT_EQ(FabricLinks(), before);
  std::ifstream metrics(out / "metrics.jsonl");
  std::string line;
  int lines = 0, wrong = 0;
  while (std::getline(metrics, line)) {
    ++lines;
    wrong += json::parse(line)["wrong"].get<int>();
  }
  EXPECT_GT(lines, 400);
  EXPECT_EQ(wrong, 0);
}

TEST_F(DrillE2E, MissingInterfaceIsRefusedBeforeAnythingIsTouched) {
  std::string before = FabricLinks();
  fs::path scenario = WriteScenario("bad-iface.yaml", "{interface: fab0, rate: 100mbit}", "{interface: fab9, rate: 100mbit}");
  fs::path out = work_ / "bad-run";
  auto run = Fdrill({"run", scenario.string(), "--out", out.string()});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("n1"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("slow-link"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("fab9"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(out)) << "no run directory for a drill that never started";
  EXPECT_EQ(FabricLinks(), before);
}

TEST_F(DrillE2E, AnAgentThatDoesNotAnswerIsNamedAndNothingIsApplied) {
  std::string before = FabricLinks();
  json fabric = ReadJson("/run/fdrill/fabric/fabric.json");
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

TEST(DrillBadInput, MissingScenarioFileAndUnknownKeyExit2) {
  auto missing = Fdrill({"run", "/nonexistent/drill.yaml"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/drill.yaml"), std::string::npos) << missing.err;
  fs::path p = fs::temp_directory_path() / ("fdrill-typo-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(p) << "name: typo\nfabric: {emulated: {nodes: 2}}\nphases:\n  - name: baseline\n    duraton: 5s\n";
  auto typo = Fdrill({"run", p.string()});
  fs::remove(p);
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find(p.string() + ":5:5"), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("did you mean \"duration\""), std::string::npos) << typo.err;
}

}  // namespace
}  // namespace fdrill

// End-to-end: drills refused before anything is touched. On a real 4-node
// emulated fabric (DrillE2E, tests/e2e/drill_e2e.h): an interface a node
// does not have, an agent that does not answer. Without one (DrillBadInput):
// a missing file, an unknown or duplicated key, a number out of range, a
// partition of the management network, a path in the name, a blast radius
// past the limit, an unknown subcommand or log level; exit 2 and file:line.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/e2e/drill_e2e.h"

namespace fdrill {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

using e2e::DrillE2E;
using e2e::Fdrill;
using e2e::ReadJson;
using e2e::Sh;

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
  json fabric = ReadJson(FabricDir() + "/fabric.json");
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
       "emulated fabric's management network 198.19.0.0/16"},
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

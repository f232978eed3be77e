// Issue 49: guards that hold for any input. What the scenario file alone
// shows can never run is refused by `fdrill validate`, naming the line:
// a name that would leave runs/, a prefix holding the emulated fabric's
// management network, an interface no agent faults, a rank the job does
// not have, a second YAML document, a file too big or not a file at all.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/core/files.h"
#include "harness/scenario/scenario.h"
#include "tests/scenario/scenario_text.h"
#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

using scenario_test::ErrorOf;
using scenario_test::Load;
using scenario_test::Replace;

constexpr char kDrill[] = R"(name: guards
fabric:
  emulated: {nodes: 4}
workload: {size: 1M, ranks_per_node: 1}
phases:
  - name: baseline
    duration: 5s
  - name: hit
    duration: 2s
    faults:
      - id: cut
        kind: link_partition
        node: n1
        params: {peers: [198.18.0.3]}
  - name: recovery
    duration: 5s
)";

TEST(ScenarioGuards, ANameWithAPathInItIsRefused) {
  for (const char* bad :
       {"\"../../../../elsewhere/escaped\"", "a/b", "..", ".hidden", "-rf", "\"two words\""}) {
    const std::string e = ErrorOf(Replace(kDrill, "name: guards", std::string("name: ") + bad));
    EXPECT_EQ(e.rfind("drill.yaml:1:7: name: ", 0), 0u) << bad << ": " << e;
  }
  EXPECT_NE(ErrorOf(Replace(kDrill, "name: guards", "name: a..b")).find("holds \"..\""),
            std::string::npos);
  EXPECT_EQ(Load(Replace(kDrill, "name: guards", "name: fw-28.39_a+b")).name, "fw-28.39_a+b");
  EXPECT_EQ(Load(Replace(kDrill, "name: guards", "name: t\xc3\xa9")).name, "t\xc3\xa9");  // UTF-8
  EXPECT_FALSE(CheckPathComponent(std::string(101, 'a')).ok());
}

TEST(ScenarioGuards, APrefixHoldingTheManagementNetworkIsRefused) {
  for (const char* prefix :
       {"0.0.0.0/0", "198.19.0.254", "198.19.7.3", "198.19.0.0/16", "198.16.0.0/12"}) {
    const std::string e = ErrorOf(
        Replace(kDrill, "peers: [198.18.0.3]", std::string("peers: [198.18.0.3, ") + prefix + "]"));
    EXPECT_EQ(e.rfind("drill.yaml:14:25: fault cut: params.peers " + std::string(prefix) +
                          " holds addresses of the emulated fabric's management network "
                          "198.19.0.0/16",
                      0),
              0u)
        << e;
  }
  // The fabric's own addresses are fine.
  Load(Replace(kDrill, "peers: [198.18.0.3]", "peers: [198.18.0.0/16]"));
}

TEST(ScenarioGuards, AnInterfaceNoAgentFaultsIsRefused) {
  const std::string faults =
      "kind: link_partition\n        node: n1\n        params: {peers: "
      "[198.18.0.3]}";
  for (const char* ifname : {"lo", "mgmt0"}) {
    const std::string e = ErrorOf(
        Replace(kDrill, faults,
                std::string("kind: link_rate\n        node: n1\n        params: {interface: ") +
                    ifname + ", rate: 1gbit}"));
    EXPECT_EQ(e.rfind("drill.yaml:14:29: fault cut: params.interface " + std::string(ifname), 0),
              0u)
        << e;
    EXPECT_NE(e.find("no agent ever faults"), std::string::npos) << e;
  }
}

TEST(ScenarioGuards, ARankBeyondTheJobIsRefused) {
  const std::string faults =
      "kind: link_partition\n        node: n1\n        params: {peers: "
      "[198.18.0.3]}";
  const std::string e = ErrorOf(
      Replace(kDrill, faults, "kind: rank_pause\n        node: n1\n        params: {rank: 99}"));
  EXPECT_EQ(e.rfind("drill.yaml:14:24: fault cut: params.rank 99 is beyond the job: it has 4 "
                    "rank(s), 0..3",
                    0),
            0u)
      << e;
  Load(Replace(kDrill, faults, "kind: rank_pause\n        node: n1\n        params: {rank: 3}"));
}

TEST(ScenarioGuards, ASecondYamlDocumentIsRefusedNotIgnored) {
  const std::string e = ErrorOf(std::string(kDrill) + "---\nname: other\n");
  EXPECT_EQ(e.rfind("drill.yaml:17:1: a second YAML document", 0), 0u) << e;
  EXPECT_NE(e.find(": a second YAML document; a scenario file holds one"), std::string::npos) << e;
}

TEST(ScenarioGuards, AFileThatIsNotAScenarioFileIsRefusedUnread) {
  auto zero = LoadScenario("/dev/zero");  // it would never end
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("/dev/zero: not a regular file"), std::string::npos)
      << zero.status().message();
  const auto dir = ScratchPath("fdrill-guards-");
  std::filesystem::create_directories(dir);
  auto directory = LoadScenario(dir.string());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("a directory"), std::string::npos);
  const auto big = dir / "big.yaml";
  {
    std::ofstream out(big);
    out << kDrill << "# " << std::string(kMaxScenarioBytes, 'x') << "\n";
  }
  auto huge = LoadScenario(big.string());
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("a scenario file holds at most 1048576"),
            std::string::npos)
      << huge.status().message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdrill

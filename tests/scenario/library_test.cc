// Every scenario in scenarios/ loads (as `fdrill validate` would), opens with
// a comment saying what it proves, and is listed in scenarios/README.md.
// topology*.yaml there are topology files, not drills (IsTopologyFile): they
// load as topologies and are held to the same comment and README rules.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "harness/scenario/scenario.h"
#include "harness/scenario/topology.h"

namespace fdrill {
namespace {

namespace fs = std::filesystem;

// The files of scenarios/ whose names end in `suffix` (every *.yaml by
// default), sorted.
std::vector<fs::path> LibraryFiles(const std::string& suffix = ".yaml") {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(FDRILL_SOURCE_DIR) / "scenarios")) {
    if (e.path().filename().string().ends_with(suffix)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// F loads, and its inventory is a real cluster's, not the emulated fabric.
void ExpectRealInventory(const fs::path& f) {
  auto s = LoadScenario(f.string());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->Emulated()) << f;
}

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ScenarioLibrary, EveryFileValidatesAndSaysWhatItProves) {
  const auto files = LibraryFiles();
  ASSERT_GE(files.size(), 12u);
  const std::string readme = Read(fs::path(FDRILL_SOURCE_DIR) / "scenarios" / "README.md");
  int topologies = 0;
  for (const auto& f : files) {
    if (IsTopologyFile(f.string())) {
      ++topologies;
      auto t = LoadTopology(f.string());
      EXPECT_TRUE(t.ok()) << f << ": " << t.status().ToString();
    } else {
      auto s = LoadScenario(f.string());
      EXPECT_TRUE(s.ok()) << f << ": " << s.status().ToString();
    }
    const std::string text = Read(f);
    EXPECT_EQ(text.rfind("# ", 0), 0u) << f << " must open with a comment saying what it proves";
    EXPECT_NE(readme.find("(" + f.filename().string() + ")"), std::string::npos)
        << f << " is not in scenarios/README.md";
  }
  EXPECT_GE(topologies, 1) << "scenarios/topology.example.yaml is the schema's example";
}

TEST(ScenarioLibrary, TheIssuesDrillsExist) {
  for (const char* name : {"quickstart", "link-degrade-ramp", "link-loss", "partition",
                           "ib-port-flap", "ib-width-downgrade", "nvlink-throttle", "gpu-straggler",
                           "rank-pause-straggler", "burn-in-soak", "firmware-regression",
                           "rank-crash-rollback", "partition-rollback", "crash-loop"}) {
    EXPECT_TRUE(
        fs::exists(fs::path(FDRILL_SOURCE_DIR) / "scenarios" / (std::string(name) + ".yaml")))
        << name;
  }
}

// A real-hardware variant sits beside its emulated drill and targets a hosts
// file, never the emulated fabric.
TEST(ScenarioLibrary, HardwareVariantsUseAHostsInventory) {
  const auto variants = LibraryFiles(".hw.yaml");
  for (const auto& f : variants) {
    ExpectRealInventory(f);
    const std::string emulated =
        f.string().substr(0, f.string().size() - std::string(".hw.yaml").size()) + ".yaml";
    EXPECT_TRUE(fs::exists(emulated)) << f << " has no emulated drill beside it";
  }
  EXPECT_GE(variants.size(), 4u);
}

// A drill that only a real cluster can run (*.cluster.yaml: an external
// workload like nccl-tests, which the emulated fabric does not run) has no
// emulated twin, and must not claim the emulated fabric.
TEST(ScenarioLibrary, ClusterOnlyDrillsUseARealInventory) {
  const auto drills = LibraryFiles(".cluster.yaml");
  for (const auto& f : drills) ExpectRealInventory(f);
  EXPECT_GE(drills.size(), 1u);
}

}  // namespace
}  // namespace fdrill

// fdrill campaign's loop (harness/controller/campaign.h) with a drill that
// only writes a summary: the index, resuming, stopping on a run the harness
// could not finish, and the checks made before any run.
#include "harness/controller/campaign.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class CampaignTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ScratchPath("fdrill-campaign-test");
    fs::create_directories(root_);
    scenario_ = (root_ / "drill.yaml").string();
    std::ofstream(scenario_) << "name: drill\n";
  }
  void TearDown() override { fs::remove_all(root_); }

  CampaignOptions Options(int repeat) {
    return {.dir = (root_ / "camp").string(),
            .label = "fw-28.39",
            .scenario_file = scenario_,
            .repeat = repeat};
  }
  // A drill that writes summary.json with VERDICTS[n] (n counts calls) and
  // returns fdrill run's exit code for it; "" writes nothing and returns 2.
  RunOneDrill Drill(std::vector<std::string> verdicts) {
    return [this, verdicts](const std::string& dir) {
      const std::string v = verdicts.at(calls_.size());
      calls_.push_back(fs::path(dir).filename().string());
      fs::create_directories(dir);
      if (v.empty()) return 2;
      std::ofstream(fs::path(dir) / "summary.json") << json{{"verdict", v}}.dump();
      return v == "pass" ? 0 : v == "fail" ? 1 : 2;
    };
  }
  json Index() {
    std::ifstream in(root_ / "camp" / "campaign.json");
    return json::parse(in);
  }

  fs::path root_;
  std::string scenario_;
  std::vector<std::string> calls_;
};

TEST_F(CampaignTest, RunsKTimesIntoOneIndexedDirectory) {
  auto r = RunCampaign(Options(3), Drill({"pass", "fail", "pass"}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->complete);
  EXPECT_EQ(CampaignExitCode(*r), 1);  // one run missed its expectations
  EXPECT_EQ(calls_, (std::vector<std::string>{"run-01", "run-02", "run-03"}));
  const json index = Index();
  EXPECT_EQ(index["label"], "fw-28.39");
  EXPECT_EQ(index["complete"], true);
  ASSERT_EQ(index["runs"].size(), 3u);
  EXPECT_EQ(index["runs"][1]["verdict"], "fail");
  EXPECT_EQ(index["runs"][1]["exit_code"], 1);
  std::ifstream copy(root_ / "camp" / "scenario.yaml");
  std::string text((std::istreambuf_iterator<char>(copy)), {});
  EXPECT_EQ(text, "name: drill\n");
}

TEST_F(CampaignTest, ARunTheHarnessCouldNotFinishStopsItAndTheSameCommandResumes) {
  auto r = RunCampaign(Options(4), Drill({"pass", "error"}));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(CampaignExitCode(*r), 2);
  EXPECT_NE(r->stopped.find("run 2 could not finish (verdict error)"), std::string::npos)
      << r->stopped;
  EXPECT_EQ(Index()["complete"], false);
  EXPECT_EQ(Index()["runs"].size(), 2u);

  calls_.clear();
  auto resumed = RunCampaign(Options(4), Drill({"pass", "pass", "pass"}));
  ASSERT_TRUE(resumed.ok());
  EXPECT_TRUE(resumed->complete);
  EXPECT_EQ(CampaignExitCode(*resumed), 0);
  // run-01 kept; run-02 (error) run again, then 3 and 4.
  EXPECT_EQ(calls_, (std::vector<std::string>{"run-02", "run-03", "run-04"}));

  // A larger --repeat extends it; a smaller one is refused.
  calls_.clear();
  ASSERT_TRUE(RunCampaign(Options(5), Drill({"pass"})).ok());
  EXPECT_EQ(calls_, (std::vector<std::string>{"run-05"}));
  auto smaller = RunCampaign(Options(2), Drill({}));
  ASSERT_FALSE(smaller.ok());
  EXPECT_NE(smaller.status().message().find("--repeat 2"), std::string::npos);
}

// Killed mid-run (SIGKILL, no summary written): the index names the run,
// so the next invocation removes its directory and runs it again.
TEST_F(CampaignTest, ARunKilledBeforeItsSummaryIsRunAgain) {
  ASSERT_TRUE(RunCampaign(Options(1), Drill({"pass"})).ok());
  json index = Index();
  index["runs"].push_back({{"run", 2}, {"dir", "run-02"}, {"verdict", ""}, {"exit_code", 2}});
  std::ofstream(root_ / "camp" / "campaign.json") << index.dump();
  fs::create_directories(root_ / "camp" / "run-02");
  std::ofstream(root_ / "camp" / "run-02" / "events.jsonl") << "{}\n";
  calls_.clear();
  auto r = RunCampaign(Options(2), Drill({"pass"}));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->complete);
  EXPECT_EQ(calls_, (std::vector<std::string>{"run-02"}));
  EXPECT_FALSE(fs::exists(root_ / "camp" / "run-02" / "events.jsonl"));
}

TEST_F(CampaignTest, CtrlCBetweenRunsStopsIt) {
  std::atomic<bool> abort{false};
  RunOneDrill drill = [&](const std::string& dir) {
    fs::create_directories(dir);
    std::ofstream(fs::path(dir) / "summary.json") << R"({"verdict": "pass"})";
    abort = true;
    return 0;
  };
  auto r = RunCampaign(Options(3), drill, &abort);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(r->runs.size(), 1u);
  EXPECT_EQ(r->stopped, "stopped (Ctrl-C) before run 2");
}

TEST_F(CampaignTest, WhatIsWrongIsSaidBeforeAnyRun) {
  auto bad_label = Options(2);
  bad_label.label = "fw 28";
  EXPECT_NE(RunCampaign(bad_label, Drill({})).status().message().find("--label \"fw 28\""),
            std::string::npos);
  EXPECT_NE(RunCampaign(Options(0), Drill({})).status().message().find("--repeat 0"),
            std::string::npos);
  auto missing = Options(1);
  missing.scenario_file = (root_ / "nope.yaml").string();
  EXPECT_FALSE(RunCampaign(missing, Drill({})).ok());

  fs::create_directories(root_ / "camp");
  std::ofstream(root_ / "camp" / "something") << "x";
  EXPECT_NE(RunCampaign(Options(1), Drill({})).status().message().find("is not a campaign"),
            std::string::npos);
  fs::remove_all(root_ / "camp");

  ASSERT_TRUE(RunCampaign(Options(1), Drill({"pass"})).ok());
  std::ofstream(scenario_) << "name: drill\nchanged: yes\n";
  EXPECT_NE(RunCampaign(Options(2), Drill({})).status().message().find("differs from the scenario"),
            std::string::npos);
  auto other = Options(2);
  other.label = "fw-28.40";
  EXPECT_NE(RunCampaign(other, Drill({})).status().message().find("holds campaign \"fw-28.39\""),
            std::string::npos);
  EXPECT_EQ(calls_.size(), 1u);
}

}  // namespace
}  // namespace fdrill

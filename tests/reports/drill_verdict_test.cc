// Whole drills with known answers (see synthetic_run.h), what fails them
// and how the summary says so: a fault that never recovers, residue or a
// residue check that did not run, broken data, drills the harness could not
// run, faults not confirmed or not reverted, a stop condition, and the
// scenario's metric expectations per fault and per run (every expectable
// metric measured, expanded ids matched).
#include <string>
#include <variant>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/core/expectable_metrics.h"
#include "reports/analysis.h"
#include "reports/run_dir.h"
#include "tests/reports/drill_analysis.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::AnalyzeRun;
using reports_test::Find;
using reports_test::HasError;
using reports_test::SlowThatRecovers;
using reports_test::SyntheticRun;

TEST(DrillAnalysis, AFaultThatNeverRecoversFailsItsExpectation) {
  SyntheticRun run = SyntheticRun::SlowN2(1e9);
  Summary s = AnalyzeRun(run);
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_FALSE(s.faults[0].time_to_recover_s.has_value());
  EXPECT_NEAR(*s.faults[0].slowdown, 3.0, 0.05);
  const ExpectationResult* ttr = Find(s, "time_to_recover[slow-link]");
  ASSERT_NE(ttr, nullptr);
  EXPECT_FALSE(ttr->pass);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(ttr->measured));
  EXPECT_EQ(s.verdict, Verdict::kFail);
  EXPECT_EQ(ExitCodeForVerdict(s.verdict), 1);
}

TEST(DrillAnalysis, ResidueFailsTheDrill) {
  SyntheticRun run = SyntheticRun::Standard();
  run.DropEvents("residue");
  run.AddEvent(run.end_s + 0.7, "residue",
               {{"items",
                 {{{"node", "n2"},
                   {"object", "qdisc fab0"},
                   {"before", "noqueue"},
                   {"after", "tbf rate 100Mbit"}}}}});
  Summary s = AnalyzeRun(run);
  EXPECT_TRUE(s.residue_checked);
  ASSERT_EQ(s.residue.size(), 1u);
  EXPECT_EQ(s.residue[0].after, "tbf rate 100Mbit");
  const ExpectationResult* residue = Find(s, "no_residue");
  ASSERT_NE(residue, nullptr);
  EXPECT_FALSE(residue->pass);
  EXPECT_EQ(std::get<double>(residue->measured), 1.0);
  EXPECT_EQ(s.verdict, Verdict::kFail);
}

TEST(DrillAnalysis, AMissingResidueCheckIsReportedAndFailsNoResidue) {
  SyntheticRun run = SyntheticRun::Standard();
  run.DropEvents("residue");
  Summary s = AnalyzeRun(run);
  EXPECT_FALSE(s.residue_checked);
  EXPECT_TRUE(HasError(s, "residue check did not run"));
  EXPECT_FALSE(Find(s, "no_residue")->pass);
  EXPECT_EQ(s.verdict, Verdict::kFail);
}

TEST(DrillAnalysis, AWrongElementBreaksDataIntegrity) {
  SyntheticRun run = SyntheticRun::Standard();
  run.wrong[{100, 1}] = 7;
  Summary s = AnalyzeRun(run);
  EXPECT_FALSE(s.rollback.data_intact);
  EXPECT_EQ(s.rollback.wrong_elements, 7);
  EXPECT_FALSE(Find(s, "data_intact")->pass);
  EXPECT_TRUE(HasError(s, "rank 1 on n1, iteration 100"));
  EXPECT_EQ(s.verdict, Verdict::kFail);
}

TEST(DrillAnalysis, AWorkloadExitCodeThreeIsADataCheckFailure) {
  SyntheticRun run = SyntheticRun::Standard();
  for (auto& e : run.events) {
    if (e["type"] == "workload_exit" && e["node"] == "n1") e["exit_code"] = 3;
  }
  Summary s = AnalyzeRun(run);
  EXPECT_FALSE(s.rollback.data_intact);
  EXPECT_EQ(s.rollback.wrong_elements, 0);
  EXPECT_TRUE(HasError(s, "n1: workload exited with code 3 (data check failed)"));
  EXPECT_EQ(s.verdict, Verdict::kFail);
}

TEST(DrillAnalysis, HarnessFailuresGiveTheVerdictError) {
  SyntheticRun with_error = SyntheticRun::Standard();
  with_error.AddEvent(16.0, "error", {{"node", "n1"}, {"message", "agent lost"}});
  Summary s = AnalyzeRun(with_error);
  EXPECT_EQ(s.verdict, Verdict::kError);
  EXPECT_TRUE(HasError(s, "n1: agent lost"));
  EXPECT_EQ(ExitCodeForVerdict(s.verdict), 2);

  SyntheticRun aborted = SyntheticRun::Standard();
  aborted.DropEvents("drill_end");
  aborted.AddEvent(30.0, "abort", {{"reason", "busbw below 1 GB/s"}});
  aborted.AddEvent(30.1, "drill_end", {{"status", "aborted"}});
  s = AnalyzeRun(aborted);
  EXPECT_EQ(s.verdict, Verdict::kError);
  EXPECT_TRUE(HasError(s, "aborted: busbw below 1 GB/s"));

  SyntheticRun unfinished = SyntheticRun::Standard();
  unfinished.DropEvents("drill_end");
  EXPECT_EQ(AnalyzeRun(unfinished).verdict, Verdict::kError);

  SyntheticRun no_metrics = SyntheticRun::Standard();
  no_metrics.end_s = no_metrics.start_s;  // no iteration at all
  s = AnalyzeRun(no_metrics);
  EXPECT_EQ(s.verdict, Verdict::kError);
  EXPECT_TRUE(HasError(s, "no iteration was recorded"));
  EXPECT_FALSE(s.faults[0].slowdown.has_value());
}

TEST(DrillAnalysis, UnconfirmedAndUnrevertedFaultsAreReported) {
  SyntheticRun run = SyntheticRun::Standard();
  run.DropEvents("fault_reverted");
  run.AddEvent(25.0, "fault_apply", {{"id", "flap"}, {"kind", "ib_port_flap"}, {"node", "n0"}});
  Summary s = AnalyzeRun(run);
  EXPECT_TRUE(HasError(s, "fault slow-link (link_rate on n2): never reverted"));
  EXPECT_TRUE(HasError(s, "fault flap (ib_port_flap on n0): apply requested at 25.000 s"));
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_FALSE(s.faults[0].reverted_at_s.has_value());
  EXPECT_FALSE(s.faults[0].time_to_recover_s.has_value());
  EXPECT_FALSE(Find(s, "time_to_recover[slow-link]")->pass);
}

// A stop condition (or a gate's timeout) is the drill stopping itself as the
// scenario asked: verdict fail with the reason, not a harness error.
TEST(DrillAnalysis, AStopConditionFailsTheDrillWithItsReason) {
  SyntheticRun run = SyntheticRun::SlowN2(17.0);
  run.DropEvents("drill_end");
  run.AddEvent(
      17.0, "abort",
      {{"reason", "stop condition min_busbw: busbw below 5 GB/s for 3 iterations in a row"},
       {"cause", "stop_condition"}});
  run.AddEvent(30.1, "drill_end", {{"status", "aborted"}});
  Summary s = AnalyzeRun(run);
  EXPECT_EQ(s.verdict, Verdict::kFail) << (s.errors.empty() ? "" : s.errors[0]);
  EXPECT_FALSE(HasError(s, "aborted:"));
  ASSERT_TRUE(s.stopped.has_value());
  EXPECT_EQ(*s.stopped, "stop condition min_busbw: busbw below 5 GB/s for 3 iterations in a row");
  ASSERT_NE(Find(s, "timeline_completed"), nullptr);
  EXPECT_FALSE(Find(s, "timeline_completed")->pass);
}

TEST(DrillAnalysis, MetricExpectationsPerFaultAndPerRun) {
  SyntheticRun run = SlowThatRecovers();
  run.plan["expectations"]["metrics"] = {
      {{"metric", "stall_ms"}, {"fault", "slow-link"}, {"max", 100}},  // 180 ms: fails
      {{"metric", "lost_gpu_s"}, {"max", 100}},                        // every fault: passes
      {{"metric", "slowdown"}, {"fault", "slow-link"}, {"min", 2}, {"max", 4}},  // 3x: both pass
      {{"metric", "baseline.busbw_median"}, {"min", 9.5}},                       // 10 GB/s: passes
      {{"metric", "residue.count"}, {"max", 0}},                                 // passes
      {{"metric", "time_to_recover_s"},
       {"fault", "never-ran"},
       {"max", 1}}};  // no measurement: fails
  Summary s = AnalyzeRun(run);
  EXPECT_EQ(s.verdict, Verdict::kFail);
  ASSERT_NE(Find(s, "max stall_ms[slow-link]"), nullptr);
  EXPECT_FALSE(Find(s, "max stall_ms[slow-link]")->pass);
  EXPECT_NEAR(std::get<double>(Find(s, "max stall_ms[slow-link]")->measured), 180, 2);
  EXPECT_TRUE(Find(s, "max lost_gpu_s[slow-link]")->pass);
  EXPECT_TRUE(Find(s, "min slowdown[slow-link]")->pass);
  EXPECT_TRUE(Find(s, "max slowdown[slow-link]")->pass);
  EXPECT_TRUE(Find(s, "min baseline.busbw_median")->pass);
  EXPECT_TRUE(Find(s, "max residue.count")->pass);
  ASSERT_NE(Find(s, "max time_to_recover_s[never-ran]"), nullptr);
  EXPECT_FALSE(Find(s, "max time_to_recover_s[never-ran]")->pass);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(
      Find(s, "max time_to_recover_s[never-ran]")->measured));
}

// Every name the scenario loader accepts is one the reports measure: on a
// run where each can exist, an expectation on it has a measurement.
TEST(DrillAnalysis, EveryExpectableMetricIsMeasured) {
  SyntheticRun slow = SlowThatRecovers();
  SyntheticRun killed = SyntheticRun::Standard();
  for (auto& e : killed.events) {
    if (e["type"] == "workload_exit" && e["node"] == "n0") e["exit_code"] = 137;
  }
  for (std::string_view name : kExpectableMetrics) {
    bool measured = false;
    for (SyntheticRun* run : {&slow, &killed}) {
      run->plan["expectations"]["metrics"] = {{{"metric", std::string(name)}, {"max", 1e18}}};
      const Summary s = AnalyzeRun(*run);
      for (const ExpectationResult& e : s.expectations) {
        if (e.name.find(name) != std::string::npos &&
            !std::holds_alternative<std::monostate>(e.measured))
          measured = true;
      }
    }
    EXPECT_TRUE(measured) << name;
  }
}

// An expectation may name a fault by the id it was written with: "flap"
// covers "flap@n1" and "flap#2".
TEST(DrillAnalysis, MetricExpectationsMatchExpandedIds) {
  SyntheticRun run = SlowThatRecovers();
  for (auto& e : run.events) {
    if (e.contains("id") && e["id"] == "slow-link") e["id"] = "slow-link#2@n2";
  }
  run.plan["expectations"]["metrics"] = {
      {{"metric", "slowdown"}, {"fault", "slow-link"}, {"max", 10}}};
  Summary s = AnalyzeRun(run);
  ASSERT_NE(Find(s, "max slowdown[slow-link#2@n2]"), nullptr);
  EXPECT_TRUE(Find(s, "max slowdown[slow-link#2@n2]")->pass);
}

}  // namespace
}  // namespace fdrill

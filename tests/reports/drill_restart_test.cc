// Whole drills with known answers (see synthetic_run.h), the job's end: a
// rank the fault killed fails the drill with the time to failure, a job the
// drill stopped at its end has not failed, and the restart policy's
// failures, relaunches and iterations lost are measured; a digest that
// differs from the reference (within a stated tolerance or not) breaks data
// integrity, and exhausted restarts fail the job with the reason.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/analysis.h"
#include "reports/run_dir.h"
#include "tests/reports/drill_analysis.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::AnalyzeRun;
using reports_test::Find;
using reports_test::HasError;
using reports_test::SyntheticRun;

// A killed rank ends the job: the drill fails (exit 1) with the job's exit
// and the time from the fault to it, not an error of the harness, and the
// data is not called wrong.
TEST(DrillAnalysis, AJobKilledByTheFaultFailsTheDrillWithTheTimeToFailure) {
  SyntheticRun run = SyntheticRun::Standard();
  run.end_s = 18.0;
  for (auto& e : run.events) {
    if (e["type"] == "workload_exit" && e["node"] == "n0") {
      e["exit_code"] = 137;
      e["t"] = 18.5;
    }
    if (e["type"] == "drill_end") e["status"] = "aborted";
  }
  run.AddEvent(18.6, "abort",
               {{"reason", "the workload exited during the drill (code 137)"}, {"cause", "job"}});
  Summary s = AnalyzeRun(run);
  EXPECT_EQ(s.verdict, Verdict::kFail);
  EXPECT_EQ(ExitCodeForVerdict(s.verdict), 1);
  ASSERT_NE(Find(s, "job_completed"), nullptr);
  EXPECT_FALSE(Find(s, "job_completed")->pass);
  EXPECT_TRUE(s.rollback.data_intact);
  EXPECT_TRUE(HasError(s, "n0: workload exited with code 137"));
  EXPECT_FALSE(HasError(s, "aborted:"));
  ASSERT_EQ(s.faults.size(), 1u);
  ASSERT_TRUE(s.faults[0].job_failed_after_s.has_value());
  EXPECT_NEAR(*s.faults[0].job_failed_after_s, 3.5, 1e-9);
}

// Issue 24: a job that runs until stopped (nccl-tests -N 0 under launcher
// none) gets the drill's SIGTERM at its end and exits 143, recorded as
// forced. That is the drill stopping it, not the job failing: no
// job_completed expectation, no error, no time to failure.
TEST(DrillAnalysis, Issue24AJobTheDrillStoppedAtItsEndHasNotFailed) {
  SyntheticRun run = SyntheticRun::Standard();
  for (auto& e : run.events) {
    if (e["type"] == "workload_exit") {
      e["exit_code"] = 143;
      e["forced"] = true;
    }
  }
  Summary s = AnalyzeRun(run);
  EXPECT_EQ(s.verdict, Verdict::kPass) << (s.errors.empty() ? "" : s.errors[0]);
  EXPECT_EQ(Find(s, "job_completed"), nullptr);
  EXPECT_FALSE(HasError(s, "exited with code 143"));
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_FALSE(s.faults[0].job_failed_after_s.has_value());
  EXPECT_EQ(s.faults[0].job_outcome, "rode_through");
}

TEST(DrillAnalysis, RestartsAndIterationsLostComeFromEvents) {
  SyntheticRun run = SyntheticRun::Standard();
  run.AddEvent(24.0, "workload_start", {{"node", "n0"}, {"attempt", 1}});
  run.AddEvent(25.0, "workload_restart", {{"node", "n3"}, {"iterations_lost", 12}});
  Summary s = AnalyzeRun(run);
  EXPECT_EQ(s.rollback.restarts, 1);
  EXPECT_EQ(s.rollback.iterations_lost, 12);
  EXPECT_EQ(SyntheticRun::Standard().events.size(), run.events.size() - 2);
}

// A rank killed at 16 s: the job exits at 19.5 (detected 3.5 s after the
// kill), is relaunched and reports again at 21 (1.5 s later), resuming at
// step 200 having done 212: what the failure cost, and the job completed.
TEST(DrillAnalysis, AFailureTheRestartPolicyRecoveredFromIsMeasuredNotAnError) {
  SyntheticRun run = SyntheticRun::Standard();
  run.AddEvent(16.0, "fault_applied",
               {{"id", "kill"}, {"kind", "rank_kill"}, {"node", "n2"}, {"verified", true}});
  run.AddEvent(17.0, "fault_reverted", {{"id", "kill"}, {"node", "n2"}, {"verified", true}});
  run.AddEvent(19.5, "workload_exit", {{"node", "n0"}, {"exit_code", 137}});
  run.AddEvent(
      19.5, "workload_failed",
      {{"cause", "exit"}, {"exit_code", 137}, {"reason", "the workload exited with code 137"}});
  run.AddEvent(20.5, "workload_start", {{"node", "n0"}, {"attempt", 1}});
  run.AddEvent(21.0, "workload_restart",
               {{"restart", 1}, {"attempt", 1}, {"resumed_step", 200}, {"iterations_lost", 12}});
  run.AddEvent(30.0, "digest_check",
               {{"steps", 500}, {"digest", "00000000000000aa"}, {"expected", "00000000000000aa"}});
  Summary s = AnalyzeRun(run);
  EXPECT_EQ(s.verdict, Verdict::kPass) << (s.errors.empty() ? "" : s.errors[0]);
  EXPECT_EQ(Find(s, "job_completed"), nullptr);
  EXPECT_FALSE(HasError(s, "exited with code 137"));
  ASSERT_EQ(s.rollback.failures.size(), 1u);
  const RestartStats& f = s.rollback.failures[0];
  EXPECT_EQ(f.cause, "exit");
  EXPECT_EQ(f.fault, "kill");
  EXPECT_NEAR(*f.time_to_detect_s, 3.5, 1e-9);
  EXPECT_NEAR(*f.time_to_restart_s, 1.5, 1e-9);
  EXPECT_EQ(f.resumed_step, 200);
  EXPECT_EQ(f.iterations_lost, 12);
  ASSERT_TRUE(f.back_in_band_s.has_value());  // the synthetic job runs at full speed from 21 s
  EXPECT_LT(*f.back_in_band_s, 1.0);
  EXPECT_TRUE(s.rollback.data_intact);
  EXPECT_EQ(s.rollback.digest_steps, 500);
}

TEST(DrillAnalysis, ADigestThatDiffersFromTheReferenceBreaksDataIntegrity) {
  SyntheticRun run = SyntheticRun::Standard();
  run.AddEvent(30.0, "digest_check",
               {{"steps", 500}, {"digest", "00000000000000aa"}, {"expected", "00000000000000ab"}});
  Summary s = AnalyzeRun(run);
  EXPECT_FALSE(s.rollback.data_intact);
  EXPECT_TRUE(HasError(s,
                       "final digest 00000000000000aa after 500 steps differs from the fault-free "
                       "00000000000000ab"));
  EXPECT_EQ(s.verdict, Verdict::kFail);
}

// A framework that is not bitwise deterministic states a tolerance: the
// number the job printed passes within it and fails past it, and a digest
// that is not a number never passes.
TEST(DrillAnalysis, ADigestWithAToleranceComparesTheNumbersItStates) {
  const auto analyse = [](const std::string& got, const std::string& expected) {
    SyntheticRun run = SyntheticRun::Standard();
    run.AddEvent(30.0, "digest_check",
                 {{"steps", 500},
                  {"digest", got},
                  {"expected", expected},
                  {"key", "param_norm"},
                  {"tolerance", 1e-6}});
    return AnalyzeRun(run);
  };
  Summary within = analyse("31.622776601683793", "31.62277661");
  EXPECT_TRUE(within.rollback.data_intact);
  EXPECT_TRUE(within.rollback.digest_intact);
  EXPECT_EQ(within.rollback.digest_key, "param_norm");
  ASSERT_TRUE(within.rollback.digest_difference.has_value());
  EXPECT_NEAR(*within.rollback.digest_difference, 2.7e-10, 1e-10);
  EXPECT_EQ(within.verdict, Verdict::kPass) << (within.errors.empty() ? "" : within.errors[0]);

  Summary past = analyse("31.6228", "31.6227");
  EXPECT_FALSE(past.rollback.data_intact);
  EXPECT_TRUE(HasError(past,
                       "final param_norm 31.6228 after 500 steps is not the fault-free 31.6227 "
                       "within a relative 1e-06"));
  EXPECT_EQ(past.verdict, Verdict::kFail);
  EXPECT_FALSE(analyse("00000000000000aa", "00000000000000aa").rollback.data_intact);
  EXPECT_FALSE(analyse("nan", "nan").rollback.data_intact);
}

// Restarts exhausted: the last launch failed, the drill ended on it.
TEST(DrillAnalysis, ExhaustedRestartsFailTheJobWithTheReason) {
  SyntheticRun run = SyntheticRun::Standard();
  for (auto& e : run.events) {
    if (e["type"] == "drill_end") e["status"] = "aborted";
  }
  run.AddEvent(19.5, "workload_failed",
               {{"cause", "exit"}, {"reason", "the workload exited with code 137"}});
  run.AddEvent(20.5, "workload_start", {{"node", "n0"}, {"attempt", 1}});
  run.AddEvent(21.0, "workload_restart",
               {{"restart", 1}, {"resumed_step", 200}, {"iterations_lost", 3}});
  run.AddEvent(25.0, "workload_exit", {{"node", "n0"}, {"exit_code", 137}});
  run.AddEvent(25.0, "workload_failed",
               {{"cause", "exit"}, {"reason", "the workload exited with code 137"}});
  const std::string why =
      "the job failed 2 times (last: it exited with code 137); restarts exhausted (max_restarts 1)";
  run.AddEvent(25.1, "abort", {{"reason", why}, {"cause", "job"}});
  Summary s = AnalyzeRun(run);
  EXPECT_EQ(s.verdict, Verdict::kFail);
  ASSERT_NE(Find(s, "job_completed"), nullptr);
  EXPECT_EQ(s.stopped, why);
  EXPECT_EQ(s.rollback.restarts, 1);
  ASSERT_EQ(s.rollback.failures.size(), 2u);
  EXPECT_FALSE(s.rollback.failures[1].time_to_restart_s.has_value());
}

}  // namespace
}  // namespace fdrill

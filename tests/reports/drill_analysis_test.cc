// Whole drills with known answers (see synthetic_run.h): a 3x slowdown that
// recovers 2.0 s after its revert, a link-down stall, a fault that never
// recovers, residue, broken data, and drills the harness could not run.
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/expectable_metrics.h"
#include "reports/analysis.h"
#include "reports/run_dir.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::AnalyzeRun;
using reports_test::kBaselineGbps;
using reports_test::kBaseMs;
using reports_test::SyntheticRun;
using reports_test::TempDir;

const ExpectationResult* Find(const Summary& s, const std::string& name) {
  auto it = std::find_if(s.expectations.begin(), s.expectations.end(),
                         [&](const ExpectationResult& e) { return e.name == name; });
  return it == s.expectations.end() ? nullptr : &*it;
}

bool HasError(const Summary& s, const std::string& part) {
  return std::any_of(s.errors.begin(), s.errors.end(),
                     [&](const std::string& e) { return e.find(part) != std::string::npos; });
}

// Iterations starting in [15, 22) run 3x slower: the fault is on from 15 to
// 20 and the fabric takes 2.0 s more to come back.
SyntheticRun SlowThatRecovers() {
  SyntheticRun run = SyntheticRun::SlowN2(22.0);
  return run;
}

TEST(DrillAnalysis, SlowdownImpactStallAndRecoveryOfAThreefoldSlowLink) {
  Summary s = AnalyzeRun(SlowThatRecovers());
  EXPECT_EQ(s.verdict, Verdict::kPass) << (s.errors.empty() ? "" : s.errors[0]);
  EXPECT_TRUE(s.errors.empty());
  EXPECT_EQ(s.baseline.phase, "baseline");
  EXPECT_NEAR(*s.baseline.busbw_median, kBaselineGbps, 0.01 * kBaselineGbps);
  EXPECT_NEAR(*s.baseline.band_low, 0.9 * *s.baseline.busbw_median, 1e-9);  // the 10 % floor

  ASSERT_EQ(s.faults.size(), 1u);
  const FaultStats& f = s.faults[0];
  EXPECT_EQ(f.id, "slow-link");
  EXPECT_EQ(f.kind, "link_rate");
  EXPECT_EQ(f.node, "n2");
  EXPECT_EQ(f.target, "fab0");
  EXPECT_DOUBLE_EQ(f.applied_at_s, 15.0);
  EXPECT_DOUBLE_EQ(*f.reverted_at_s, 20.0);
  ASSERT_TRUE(f.slowdown.has_value());
  EXPECT_NEAR(*f.slowdown, 3.0, 0.05);
  // The first slow iteration ends within one fast plus one slow iteration.
  ASSERT_TRUE(f.time_to_impact_s.has_value());
  EXPECT_GT(*f.time_to_impact_s, 0);
  EXPECT_LE(*f.time_to_impact_s, (kBaseMs + 3 * kBaseMs) * 1.01 / 1000);
  ASSERT_TRUE(f.time_to_recover_s.has_value());
  EXPECT_NEAR(*f.time_to_recover_s, 2.0, 3 * kBaseMs * 1.01 / 1000);
  EXPECT_GE(*f.time_to_recover_s, 2.0);
  ASSERT_TRUE(f.stall_ms.has_value());
  EXPECT_NEAR(*f.stall_ms, 3 * kBaseMs, 3 * kBaseMs * 0.011);
  EXPECT_EQ(f.culprit, "n2");
  EXPECT_EQ(f.culprit_rank, 2);
  // 4 ranks x 7 s (15..22) at a third of the baseline rate: 4 x 7 x 2/3.
  ASSERT_TRUE(f.lost_gpu_s.has_value());
  EXPECT_NEAR(*f.lost_gpu_s, 4 * 7.0 * 2 / 3, 0.6);
  EXPECT_FALSE(f.culprit_link.has_value());  // no counters events
  // Per rank: the culprit (n2) takes the whole 3x time; the others wait
  // for it a third of that in the line-up and spend the rest (1 % less in
  // all) inside the collective.
  ASSERT_EQ(f.ranks.size(), 4u);
  EXPECT_EQ(f.ranks[2].node, "n2");
  EXPECT_NEAR(f.ranks[2].time_ms_p50, 3 * kBaseMs, 3 * kBaseMs * 0.011);
  EXPECT_EQ(f.ranks[2].wait_ms_p50, 0);
  EXPECT_EQ(f.ranks[0].wait_ms_p50, kBaseMs);
  EXPECT_NEAR(f.ranks[0].time_ms_p50 + f.ranks[0].wait_ms_p50, 0.99 * 3 * kBaseMs,
              3 * kBaseMs * 0.011);
  ASSERT_TRUE(f.localisation.has_value());
  EXPECT_EQ(f.localisation->element, "rank 2 (n2)");

  const ExpectationResult* ttr = Find(s, "time_to_recover[slow-link]");
  ASSERT_NE(ttr, nullptr);
  EXPECT_TRUE(ttr->pass);
  EXPECT_EQ(std::get<double>(ttr->limit), 10.0);
  EXPECT_EQ(std::get<double>(ttr->measured), *f.time_to_recover_s);
  ASSERT_NE(Find(s, "slowdown[slow-link]"), nullptr);
  EXPECT_TRUE(Find(s, "slowdown[slow-link]")->pass);
  EXPECT_EQ(s.expectations.size(), 4u);
}

// The link whose drop/error/qdisc counters rose most while the fault was on,
// not the one moving the most bytes.
TEST(DrillAnalysis, CulpritLinkIsTheOneWhoseDropCountersRose) {
  SyntheticRun run = SlowThatRecovers();
  run.AddEvent(
      14.0, "counters",
      {{"node", "n1"}, {"counters", {{"fab0.qdisc_overlimits", 100}, {"fab0.tx_bytes", 1e9}}}});
  run.AddEvent(14.0, "counters",
               {{"node", "n2"}, {"counters", {{"fab0.rx_dropped", 0}, {"fab0.tx_bytes", 1e9}}}});
  run.AddEvent(
      19.0, "counters",
      {{"node", "n1"}, {"counters", {{"fab0.qdisc_overlimits", 900}, {"fab0.tx_bytes", 9e9}}}});
  run.AddEvent(19.0, "counters",
               {{"node", "n2"}, {"counters", {{"fab0.rx_dropped", 5}, {"fab0.tx_bytes", 9e10}}}});
  run.AddEvent(25.0, "counters",
               {{"node", "n2"}, {"counters", {{"fab0.rx_dropped", 5000}}}});  // after the revert
  Summary s = AnalyzeRun(run);
  ASSERT_EQ(s.faults.size(), 1u);
  ASSERT_TRUE(s.faults[0].culprit_link.has_value());
  EXPECT_EQ(*s.faults[0].culprit_link, "n1 fab0 (qdisc_overlimits +800)");
}

// A counter that goes down was reset (link_rate replaces the root qdisc,
// whose counters start again at 0): a reset, never a negative delta. Seen in
// the quickstart as `fab0.qdisc_drops -68`.
TEST(DrillAnalysis, ACounterResetIsAResetNotANegativeDelta) {
  const std::vector<std::pair<double, double>> drops = {
      {14.0, 68}, {16.0, 3}, {18.0, 10}, {21.0, 2}, {24.0, 2}};
  EXPECT_DOUBLE_EQ(CounterIncrease(drops, 14.0, 19.0), 10);  // reset to 3, then +7
  EXPECT_DOUBLE_EQ(CounterIncrease(drops, 14.0, 30.0), 12);  // and reset again to 2
  EXPECT_DOUBLE_EQ(CounterIncrease(drops, 16.0, 18.0), 7);
  EXPECT_DOUBLE_EQ(CounterIncrease(drops, 21.0, 30.0), 0);
  EXPECT_DOUBLE_EQ(CounterIncrease({{1.0, 5}, {2.0, 9}}, 0.0, 3.0), 4);  // from the first sample

  SyntheticRun run = SlowThatRecovers();
  for (const auto& [t, v] : drops) {
    run.AddEvent(t, "counters", {{"node", "n1"}, {"counters", {{"fab0.qdisc_drops", v}}}});
  }
  Summary s = AnalyzeRun(run);
  for (const CounterDelta& c : s.counters) {
    EXPECT_GE(c.delta, 0) << c.phase << " " << c.counter;
  }
  ASSERT_EQ(s.faults.size(), 1u);
  ASSERT_TRUE(s.faults[0].culprit_link.has_value());
  EXPECT_EQ(*s.faults[0].culprit_link, "n1 fab0 (qdisc_drops +10)");  // apply 15 .. revert 20
}

// The job made no progress for about 4 s inside the fault's window (no
// iteration at all: a dead job, a restart): those seconds count whole. Seen:
// rank-crash-rollback reported 0.0 GPU·s for a 5.7 s outage on 4 ranks.
TEST(DrillAnalysis, LostGpuSecondsCountTimeWithNoIterationAtAll) {
  SyntheticRun run = SyntheticRun::Standard();
  TempDir dir;
  run.WriteTo(dir.path());
  std::string kept;
  for (const std::string& line : run.MetricLines()) {
    const double t = nlohmann::json::parse(line)["t"].get<double>();
    if (t > 15.5 && t <= 19.5) continue;  // nothing completes from 15.5 to 19.5
    kept += line + "\n";
  }
  reports_test::WriteText(dir.path() / "metrics.jsonl", kept);
  Result<RunData> data = LoadRunDir(dir.path().string());
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Summary s = Analyze(*data);
  ASSERT_EQ(s.faults.size(), 1u);
  ASSERT_TRUE(s.faults[0].lost_gpu_s.has_value());
  EXPECT_GE(*s.faults[0].lost_gpu_s, 4 * 3.9);
  EXPECT_LE(*s.faults[0].lost_gpu_s, 4 * 4.2);
  // 4 s lost of the 25 after the baseline.
  ASSERT_TRUE(s.ettr.has_value());
  EXPECT_NEAR(*s.ettr, 21.0 / 25.0, 0.02);
}

TEST(DrillAnalysis, AnUntouchedRunHasAnEttrOfOneAndLosesNothing) {
  const Summary s = AnalyzeRun(SyntheticRun::Standard());
  ASSERT_TRUE(s.ettr.has_value());
  EXPECT_NEAR(*s.ettr, 1.0, 0.02);
  EXPECT_LT(*s.faults[0].lost_gpu_s, 4 * 0.1);
}

// A relaunch resumes from its checkpoint and does steps 5..9 again: that
// work is not progress.
TEST(DrillAnalysis, StepsARelaunchRedoesAreNotProgress) {
  std::vector<Iteration> series;
  for (int64_t i = 0; i < 10; ++i) series.push_back({.iter = i, .attempt = 0});
  for (int64_t i = 5; i < 13; ++i) series.push_back({.iter = i, .attempt = 1});
  for (int64_t i = 12; i < 14; ++i) series.push_back({.iter = i, .attempt = 2});
  const std::vector<bool> redone = RedoneIterations(series);
  for (size_t k = 0; k < series.size(); ++k) {
    const Iteration& it = series[k];
    const bool again = (it.attempt == 1 && it.iter <= 9) || (it.attempt == 2 && it.iter <= 12);
    EXPECT_EQ(redone[k], again) << "attempt " << it.attempt << " step " << it.iter;
  }
  series[12].start_s = 0;
  series[12].end_s = 2;
  series[12].busbw_gbps = 3;  // attempt 1 step 7: redone
  series[15].start_s = 1;
  series[15].end_s = 3;
  series[15].busbw_gbps = 5;  // attempt 1 step 10: new
  EXPECT_DOUBLE_EQ(Progress(series, redone, 0, 2.5), 1.5 * 5);
}

// An IB port that went down during the fault (link_downed, symbol errors)
// is named by its device and port; bytes moved do not count.
TEST(DrillAnalysis, CulpritLinkCanBeAnIbPort) {
  SyntheticRun run = SlowThatRecovers();
  run.AddEvent(14.0, "counters",
               {{"node", "n1"},
                {"counters",
                 {{"ib/mlx5_0/1.link_downed", 3},
                  {"ib/mlx5_0/1.symbol_error", 10},
                  {"ib/mlx5_0/1.port_xmit_data", 1e9},
                  {"fab0.qdisc_drops", 0}}}});
  run.AddEvent(19.0, "counters",
               {{"node", "n1"},
                {"counters",
                 {{"ib/mlx5_0/1.link_downed", 5},
                  {"ib/mlx5_0/1.symbol_error", 14},
                  {"ib/mlx5_0/1.port_xmit_data", 9e9},
                  {"fab0.qdisc_drops", 1}}}});
  Summary s = AnalyzeRun(run);
  ASSERT_EQ(s.faults.size(), 1u);
  ASSERT_TRUE(s.faults[0].culprit_link.has_value());
  EXPECT_EQ(*s.faults[0].culprit_link, "n1 ib/mlx5_0/1 (link_downed +2, symbol_error +4)");
}

TEST(DrillAnalysis, PhasesCountTheIterationsThatEndInThem) {
  Summary s = AnalyzeRun(SlowThatRecovers());
  ASSERT_EQ(s.phases.size(), 3u);
  const PhaseStats& base = s.phases[0];
  EXPECT_EQ(base.name, "baseline");
  EXPECT_DOUBLE_EQ(base.start_s, 0.5);
  EXPECT_DOUBLE_EQ(base.end_s, 15.0);
  EXPECT_NEAR(base.count, 14.0 / (kBaseMs / 1000), 3);  // 14 s of 60 ms iterations
  EXPECT_NEAR(*base.iter_ms_p50, kBaseMs, 0.01 * kBaseMs);
  EXPECT_LE(*base.iter_ms_p99, 1.01 * kBaseMs);
  EXPECT_NEAR(*base.busbw_gbps_p50, kBaselineGbps, 0.01 * kBaselineGbps);
  const PhaseStats& fault = s.phases[1];
  EXPECT_EQ(fault.name, "slow-link");
  EXPECT_NEAR(*fault.iter_ms_p50, 3 * kBaseMs, 0.01 * 3 * kBaseMs);
  EXPECT_NEAR(*fault.busbw_gbps_p50, kBaselineGbps / 3, 0.01 * kBaselineGbps);
}

TEST(DrillAnalysis, LinkDownStallsOneIterationAcrossTheWholeWindow) {
  SyntheticRun run = SyntheticRun::Standard();
  // The link is down 15.0 -> 18.0: the iteration in flight at 15.0 ends at
  // 18.05, and no iteration ends inside [15, 18].
  for (auto& e : run.events) {
    if (e["type"] == "fault_reverted") e["t"] = 18.0;
  }
  run.stalls.push_back({.at_s = 15.0, .until_s = 18.05});
  Summary s = AnalyzeRun(run);
  ASSERT_EQ(s.faults.size(), 1u);
  const FaultStats& f = s.faults[0];
  ASSERT_TRUE(f.stall_ms.has_value());
  EXPECT_NEAR(*f.stall_ms, 3000, 120);  // 3.05 s plus what had run before 15.0
  ASSERT_TRUE(f.slowdown.has_value());
  EXPECT_NEAR(*f.slowdown, *f.stall_ms / kBaseMs, 0.02 * *f.stall_ms / kBaseMs);
  ASSERT_TRUE(f.time_to_impact_s.has_value());
  EXPECT_NEAR(*f.time_to_impact_s, 3.05, 1e-6);
  ASSERT_TRUE(f.time_to_recover_s.has_value());
  EXPECT_NEAR(*f.time_to_recover_s, 0.05, 1e-6);  // the next iteration is healthy
  // 50x slower than the 5x limit: that expectation fails, the drill fails.
  EXPECT_FALSE(Find(s, "slowdown[slow-link]")->pass);
  EXPECT_EQ(s.verdict, Verdict::kFail);
}

// Issue 49: a phase's slowdown was a median over its iterations, so a
// stall (few, long iterations) hardly moved it: the quickstart's flap read
// 1.24x for the phase and 210x for the fault. Now both are time-weighted:
// the 3 s stall counts for its length, the median stays a column of its own.
TEST(DrillAnalysis, APhasesSlowdownCountsAStallForItsWholeLength) {
  SyntheticRun run = SyntheticRun::Standard();
  run.stalls.push_back({.at_s = 16.0, .until_s = 19.0});
  Summary s = AnalyzeRun(run);
  auto phase = std::find_if(s.phases.begin(), s.phases.end(),
                            [](const PhaseStats& p) { return p.name == "slow-link"; });
  ASSERT_NE(phase, s.phases.end());
  ASSERT_TRUE(phase->slowdown && phase->busbw_gbps_p50 && phase->busbw_gbps_mean);
  // The median over iterations sees ~33 healthy ones and one slow one.
  EXPECT_NEAR(*s.baseline.busbw_median / *phase->busbw_gbps_p50, 1.0, 0.03);
  // Time-weighted: ~3 of the phase's 5 s moved one iteration's bytes.
  EXPECT_GT(*phase->slowdown, 2.0) << *phase->slowdown;
  EXPECT_LT(*phase->busbw_gbps_mean, 0.5 * *phase->busbw_gbps_p50);
  // The phase and the fault over the same window agree.
  ASSERT_TRUE(s.faults[0].slowdown.has_value());
  EXPECT_NEAR(*phase->slowdown, *s.faults[0].slowdown, 0.02 * *s.faults[0].slowdown);
  // An untouched phase reads 1.00.
  EXPECT_NEAR(*s.phases.front().slowdown, 1.0, 0.02);
}

// Regression (quickstart on the emulated fabric: a 3.35 s link-down stall
// reported slowdown 1.05): an iteration that finishes normally just after the
// apply must not stand for the whole window.
TEST(DrillAnalysis, ANormalIterationEndingJustAfterALinkDownDoesNotHideTheStall) {
  SyntheticRun run = SyntheticRun::Standard();
  for (auto& e : run.events) {
    if (e["type"] == "fault_reverted") e["t"] = 18.0;
  }
  const double stall_at =
      15.0 + 1.5 * kBaseMs / 1000;  // one healthy iteration ends inside the window first
  run.stalls.push_back({.at_s = stall_at, .until_s = 18.05});
  Summary s = AnalyzeRun(run);
  ASSERT_EQ(s.faults.size(), 1u);
  const FaultStats& f = s.faults[0];
  ASSERT_TRUE(f.slowdown.has_value());
  EXPECT_GT(*f.slowdown, 20.0) << "the job ran ~3 s of a 3 s window stalled";
  ASSERT_TRUE(f.stall_ms.has_value());
  EXPECT_GT(*f.stall_ms, 2900);
}

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

}  // namespace
}  // namespace fdrill

namespace fdrill {
namespace {

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

// Whole drills with known answers (see synthetic_run.h), the fault's
// numbers: a 3x slowdown that recovers 2.0 s after its revert (impact,
// stall, recovery, the ranks), the culprit link by its counters (an
// Ethernet link or an IB port; a counter reset is no negative delta), the
// GPU·s lost and the ETTR, the phases, and a link-down stall counted for
// its whole length. What fails a drill is in drill_verdict_test.cc, the
// job's end and restarts in drill_restart_test.cc.
#include "tests/reports/drill_analysis.h"

#include <variant>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/analysis.h"
#include "reports/run_dir.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::AnalyzeRun;
using reports_test::Find;
using reports_test::kBaselineGbps;
using reports_test::kBaseMs;
using reports_test::SlowThatRecovers;
using reports_test::SyntheticRun;
using reports_test::TempDir;

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

}  // namespace
}  // namespace fdrill

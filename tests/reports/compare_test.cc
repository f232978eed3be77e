// fdrill compare's statistics and verdicts on synthetic A/B runs and
// campaigns with planted changes (synthetic_run.h): 400 MB all_reduce,
// phases baseline, slow-link and recovery, a few hundred iterations each.
#include "reports/compare.h"

#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/ab_stats.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::ReadText;
using reports_test::SyntheticRun;
using reports_test::TempDir;
using reports_test::WriteText;

SyntheticRun Synth(double speed, double noise, uint32_t seed) {
  SyntheticRun run = SyntheticRun::Standard();
  run.speed = speed;
  run.noise = noise;
  run.seed = seed;
  return run;
}

// One run a side decides only knowing how runs differ: these synthetic runs
// differ only by their 1 % per-iteration noise, so 0.5 % is generous.
CompareOptions Spread(double threshold = 0.03) {
  CompareOptions o;
  o.run_spread = 0.005;
  o.threshold = threshold;
  return o;
}

Comparison CompareSynthetic(const SyntheticRun& a, const SyntheticRun& b,
                            const CompareOptions& options = Spread()) {
  TempDir da, db;
  a.WriteTo(da.path());
  b.WriteTo(db.path());
  Result<Comparison> c = CompareRunDirs(da.path().string(), db.path().string(), options);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : Comparison{};
}

// RUNS as a campaign directory in DIR, as `fdrill campaign` lays it out;
// `exit_codes` per run (default 0).
void WriteCampaign(const std::filesystem::path& dir, const std::vector<SyntheticRun>& runs,
                   std::vector<int> exit_codes = {}) {
  nlohmann::json index = {{"label", "x"},
                          {"scenario", "scenario.yaml"},
                          {"repeat", runs.size()},
                          {"complete", true},
                          {"stopped", ""}};
  index["runs"] = nlohmann::json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string name = "run-0" + std::to_string(i + 1);
    std::filesystem::create_directories(dir / name);
    runs[i].WriteTo(dir / name);
    const int code = i < exit_codes.size() ? exit_codes[i] : 0;
    index["runs"].push_back(
        {{"run", i + 1}, {"dir", name}, {"verdict", "pass"}, {"exit_code", code}, {"wall_s", 40}});
  }
  WriteText(dir / "campaign.json", index.dump(2));
}

std::vector<const CompareRow*> Busbw(const Comparison& c) {
  std::vector<const CompareRow*> out;
  for (const CompareRow& r : c.rows)
    if (r.group == "busbw") out.push_back(&r);
  return out;
}

const CompareRow* Row(const Comparison& c, const std::string& group, const std::string& metric) {
  for (const CompareRow& r : c.rows)
    if (r.group == group && r.metric == metric) return &r;
  return nullptr;
}

void ExpectEveryBusbwRow(const Comparison& c, CompareVerdict verdict) {
  ASSERT_EQ(Busbw(c).size(), 3u);  // one op and size, three phases
  for (const CompareRow* r : Busbw(c)) {
    EXPECT_EQ(r->verdict, verdict)
        << r->metric << ": ratio " << r->ratio.value_or(-1) << " interval "
        << r->ci_low.value_or(-1) << "–" << r->ci_high.value_or(-1);
  }
}

TEST(Compare, FivePercentRegressionWithOnePercentNoiseIsFlagged) {
  Comparison c = CompareSynthetic(Synth(1.0, 0.01, 1), Synth(0.95, 0.01, 2));
  ExpectEveryBusbwRow(c, CompareVerdict::kRegression);
  EXPECT_EQ(c.overall, CompareVerdict::kRegression);
  EXPECT_EQ(ExitCodeForComparison(c), 1);
  const CompareRow& baseline = *Busbw(c)[0];
  EXPECT_EQ(baseline.op, "all_reduce");
  EXPECT_EQ(baseline.bytes, reports_test::kBytes);
  EXPECT_EQ(baseline.phase, "baseline");
  EXPECT_EQ(baseline.basis, "batches of iterations, --run-spread");
  EXPECT_EQ(baseline.n_a, 10);
  EXPECT_NEAR(*baseline.ratio, 0.95, 0.005);
  EXPECT_LT(*baseline.ci_low, *baseline.ratio);
  EXPECT_GT(*baseline.ci_high, *baseline.ratio);
  EXPECT_LT(*baseline.ci_high, 0.97);
}

TEST(Compare, NoChangeWithFivePercentNoiseIsNotFlagged) {
  Comparison c = CompareSynthetic(Synth(1.0, 0.05, 1), Synth(1.0, 0.05, 2));
  ExpectEveryBusbwRow(c, CompareVerdict::kNoChange);
  EXPECT_EQ(c.overall, CompareVerdict::kNoChange);
  EXPECT_EQ(ExitCodeForComparison(c), 0);
  for (const CompareRow* r : Busbw(c)) EXPECT_NEAR(*r->ratio, 1.0, 0.02) << r->phase;
}

TEST(Compare, FivePercentImprovementIsFlagged) {
  Comparison c = CompareSynthetic(Synth(1.0, 0.01, 1), Synth(1.05, 0.01, 2));
  ExpectEveryBusbwRow(c, CompareVerdict::kImprovement);
  EXPECT_EQ(c.overall, CompareVerdict::kImprovement);
  EXPECT_EQ(ExitCodeForComparison(c), 0);
}

TEST(Compare, AChangeWithinTheThresholdIsNoChange) {
  Comparison c = CompareSynthetic(Synth(1.0, 0.01, 1), Synth(0.95, 0.01, 2), Spread(0.10));
  ExpectEveryBusbwRow(c, CompareVerdict::kNoChange);
  EXPECT_EQ(ExitCodeForComparison(c), 0);
}

// A neighbour's burst: B's baseline runs 12 % slower for 3 s of its 14.5 s.
// Counted iteration by iteration it is a few hundred "independent" samples
// of a lower median; in batches it is a few slow batches, and the interval
// widens to say the runs alone cannot tell.
TEST(Compare, ASlowStretchInOneRunIsNotCalledARegression) {
  SyntheticRun b = Synth(1.0, 0.01, 2);
  b.slow.push_back({3.0, 6.0, 1.12, ""});
  Comparison c = CompareSynthetic(Synth(1.0, 0.01, 1), b);
  const CompareRow& baseline = *Busbw(c)[0];
  EXPECT_LT(*baseline.ratio, 0.99);
  EXPECT_NE(baseline.verdict, CompareVerdict::kRegression)
      << "interval " << *baseline.ci_low << "–" << *baseline.ci_high;
}

// Without --run-spread, one run a side shows its within-run interval and
// decides nothing: runs of one drill differ by more than their iterations
// say (bench/compare_calibration.sh), so a 5 % gap may be that.
TEST(Compare, OneRunASideWithoutARunSpreadDecidesNothing) {
  Comparison c = CompareSynthetic(Synth(1.0, 0.01, 1), Synth(0.95, 0.01, 2), CompareOptions{});
  ExpectEveryBusbwRow(c, CompareVerdict::kNotEnoughRuns);
  const CompareRow& baseline = *Busbw(c)[0];
  EXPECT_EQ(baseline.basis, "batches of iterations");
  EXPECT_LT(*baseline.ci_high, 0.97);  // the within-run interval, shown
  EXPECT_NE(baseline.note.find("give --run-spread"), std::string::npos) << baseline.note;
  EXPECT_FALSE(baseline.runs_needed);
  EXPECT_EQ(c.overall, CompareVerdict::kNotEnoughRuns);
  EXPECT_EQ(ExitCodeForComparison(c), 2);
  // A wide run spread swallows the gap: no change, with a note.
  CompareOptions wide;
  wide.run_spread = 0.05;
  Comparison w = CompareSynthetic(Synth(1.0, 0.01, 1), Synth(0.98, 0.01, 2), wide);
  EXPECT_EQ(Busbw(w)[0]->verdict, CompareVerdict::kNoChange);
  EXPECT_EQ(Busbw(w)[0]->note, "the interval reaches past ±3 %");
}

TEST(Compare, OneRunASideCannotJudgeAFaultsMetrics) {
  Comparison c = CompareSynthetic(SyntheticRun::SlowN2(22), SyntheticRun::SlowN2(22));
  const CompareRow* slowdown = Row(c, "slow-link", "slowdown");
  ASSERT_NE(slowdown, nullptr);
  EXPECT_EQ(slowdown->verdict, CompareVerdict::kNotEnoughRuns);
  EXPECT_EQ(slowdown->n_a, 1);
  EXPECT_NE(slowdown->note.find("fdrill campaign --repeat K"), std::string::npos);
  EXPECT_EQ(slowdown->better, Better::kLower);
  const CompareRow* impact = Row(c, "slow-link", "time to impact");
  ASSERT_NE(impact, nullptr);
  EXPECT_EQ(impact->better, Better::kNeither);
}

TEST(Compare, CampaignsCompareOverRunsAndFindASlowerRecovery) {
  TempDir da, db;
  std::vector<SyntheticRun> a, b;
  for (uint32_t seed : {11u, 12u, 13u, 14u}) {
    SyntheticRun ra = SyntheticRun::SlowN2(22);  // recovers 2 s after the revert
    ra.seed = seed;
    a.push_back(ra);
    SyntheticRun rb = SyntheticRun::SlowN2(27);  // 7 s after it
    rb.seed = seed + 100;
    rb.speed = 0.90;
    b.push_back(rb);
  }
  WriteCampaign(da.path(), a);
  WriteCampaign(db.path(), b);
  Result<Comparison> c = CompareRunDirs(da.path().string(), db.path().string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->a.campaign);
  EXPECT_EQ(c->a.runs, 4);
  const CompareRow& baseline = *Busbw(*c)[0];
  EXPECT_EQ(baseline.basis, "runs");
  EXPECT_EQ(baseline.n_a, 4);
  ASSERT_TRUE(baseline.spread);
  EXPECT_LT(*baseline.spread, 0.01);
  EXPECT_EQ(baseline.verdict, CompareVerdict::kRegression);
  EXPECT_NEAR(*baseline.ratio, 0.90, 0.01);
  const CompareRow* recover = Row(*c, "slow-link", "time to recover");
  ASSERT_NE(recover, nullptr);
  EXPECT_EQ(recover->n_b, 4);
  EXPECT_EQ(recover->verdict, CompareVerdict::kRegression)
      << *recover->a << " → " << *recover->b << " interval " << recover->ci_low.value_or(-1) << "–"
      << recover->ci_high.value_or(-1);
  EXPECT_EQ(ExitCodeForComparison(*c), 1);

  // The same campaign against itself: nothing regressed.
  Result<Comparison> same = CompareRunDirs(da.path().string(), da.path().string());
  ASSERT_TRUE(same.ok());
  for (const CompareRow& r : same->rows) {
    EXPECT_NE(r.verdict, CompareVerdict::kRegression) << r.group << " " << r.metric;
    EXPECT_NE(r.verdict, CompareVerdict::kImprovement) << r.group << " " << r.metric;
  }
  EXPECT_EQ(same->overall, CompareVerdict::kNoChange);
  EXPECT_EQ(ExitCodeForComparison(*same), 0);
}

// Issue 49: busbw is compared as work done over time, as the report's
// slowdowns are. B's recovery phase holds a 3 s stall in each run (one
// iteration of 3 s among 330): its median iteration is unchanged, its rate
// over the phase ~13 % lower, which a median per run never showed.
TEST(Compare, AStallInEveryRunIsARegressionOfTheTimeWeightedRate) {
  TempDir da, db;
  std::vector<SyntheticRun> a, b;
  for (uint32_t seed : {21u, 22u, 23u, 24u}) {
    a.push_back(Synth(1.0, 0.01, seed));
    SyntheticRun rb = Synth(1.0, 0.01, seed + 100);
    rb.stalls.push_back({.at_s = 30.0, .until_s = 33.0});
    b.push_back(rb);
  }
  WriteCampaign(da.path(), a);
  WriteCampaign(db.path(), b);
  Result<Comparison> c = CompareRunDirs(da.path().string(), db.path().string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const CompareRow* recovery = nullptr;
  for (const CompareRow* r : Busbw(*c))
    if (r->phase == "recovery") recovery = r;
  ASSERT_NE(recovery, nullptr);
  EXPECT_EQ(recovery->verdict, CompareVerdict::kRegression)
      << *recovery->ratio << " interval " << recovery->ci_low.value_or(-1) << "–"
      << recovery->ci_high.value_or(-1);
  EXPECT_NEAR(*recovery->ratio, 17.5 / 20.5, 0.03);
  EXPECT_NEAR(*Busbw(*c)[0]->ratio, 1.0, 0.01);  // the baseline phase: untouched
}

TEST(Compare, ACampaignAgainstOneRunBorrowsTheCampaignsSpread) {
  TempDir da, db;
  std::vector<SyntheticRun> a;
  for (uint32_t seed : {1u, 2u, 3u}) a.push_back(Synth(1.0, 0.01, seed));
  WriteCampaign(da.path(), a);
  Synth(0.80, 0.01, 9).WriteTo(db.path());
  Result<Comparison> c = CompareRunDirs(da.path().string(), db.path().string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->b.runs, 1);
  EXPECT_FALSE(c->b.campaign);
  const CompareRow& baseline = *Busbw(*c)[0];
  EXPECT_EQ(baseline.n_b, 1);
  EXPECT_EQ(baseline.verdict, CompareVerdict::kRegression);
}

TEST(Compare, RunsTheHarnessCouldNotFinishAreLeftOutAndNoneLeftIsAnError) {
  TempDir da, db;
  WriteCampaign(da.path(), {Synth(1.0, 0.01, 1), Synth(1.0, 0.01, 2), Synth(0.5, 0.01, 3)},
                {0, 1, 2});
  CompareSide side;
  Result<std::vector<RunData>> runs = LoadCompareSide(da.path().string(), &side);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  EXPECT_EQ(runs->size(), 2u);  // exit 1 is a measurement; exit 2 is not
  WriteCampaign(db.path(), {Synth(1.0, 0.01, 1)}, {2});
  Result<std::vector<RunData>> none = LoadCompareSide(db.path().string(), &side);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("holds no finished run"), std::string::npos);
}

TEST(Compare, PhasesOnlyOneRunHasAreNotCompared) {
  SyntheticRun a = Synth(1.0, 0.01, 1);
  SyntheticRun b = Synth(1.0, 0.01, 2);
  b.DropEvents("phase_start");
  b.DropEvents("phase_end");
  b.AddEvent(0.5, "phase_start", {{"phase", "baseline"}});
  b.AddEvent(40.5, "phase_end", {{"phase", "baseline"}});
  Comparison c = CompareSynthetic(a, b);
  std::vector<const CompareRow*> rows = Busbw(c);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]->phase, "baseline");
  EXPECT_EQ(rows[1]->verdict, CompareVerdict::kNotCompared);
  EXPECT_EQ(rows[1]->n_b, 0);
  EXPECT_EQ(rows[1]->note, "not measured in B");
  EXPECT_EQ(c.overall, CompareVerdict::kNoChange);
}

TEST(Compare, RunWithoutPhasesIsOneWholeRunRow) {
  SyntheticRun a = Synth(1.0, 0.01, 1), b = Synth(0.9, 0.01, 2);
  for (SyntheticRun* r : {&a, &b}) {
    r->DropEvents("phase_start");
    r->DropEvents("phase_end");
  }
  Comparison c = CompareSynthetic(a, b);
  ASSERT_EQ(Busbw(c).size(), 1u);
  EXPECT_EQ(Busbw(c)[0]->phase, "whole run");
  EXPECT_EQ(Busbw(c)[0]->verdict, CompareVerdict::kRegression);
}

TEST(Compare, NothingDecidedExitsTwo) {
  Comparison c;
  CompareRow r;
  r.verdict = CompareVerdict::kNotEnoughRuns;
  c.rows.push_back(r);
  c.overall = CompareVerdict::kNotEnoughRuns;
  EXPECT_EQ(ExitCodeForComparison(c), 2);
  c.overall = CompareVerdict::kNotCompared;
  EXPECT_EQ(ExitCodeForComparison(c), 2);
}

TEST(Compare, UnreadableOrEmptyRunsAreErrors) {
  TempDir da;
  Synth(1.0, 0.01, 1).WriteTo(da.path());
  EXPECT_FALSE(CompareRunDirs(da.path().string(), (da.path() / "absent").string()).ok());
  TempDir empty;
  SyntheticRun none = Synth(1.0, 0.01, 1);
  none.end_s = none.start_s;
  none.WriteTo(empty.path());
  Result<Comparison> c = CompareRunDirs(da.path().string(), empty.path().string());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("no metrics record"), std::string::npos);
}

TEST(Compare, EveryRenderingCarriesEveryRow) {
  Comparison c = CompareSynthetic(Synth(1.0, 0.01, 1), Synth(0.95, 0.01, 2));
  const std::string md = RenderCompareMarkdown(c);
  EXPECT_TRUE(md.starts_with("# fdrill compare — regression")) << md;
  EXPECT_NE(md.find("| busbw | all_reduce 400000000 B baseline | GB/s | higher | batches of "
                    "iterations, --run-spread | 10 | 10 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**regression**"), std::string::npos);
  EXPECT_NE(md.find("regression: 3 of " + std::to_string(c.rows.size()) + " metrics regressed"),
            std::string::npos)
      << md;
  nlohmann::json j = nlohmann::json::parse(RenderCompareJson(c));
  EXPECT_EQ(j["verdict"], "regression");
  EXPECT_EQ(j["method"]["threshold"], 0.03);
  EXPECT_EQ(j["method"]["time_threshold"], 0.25);
  EXPECT_EQ(j["method"]["run_spread"], 0.005);
  EXPECT_EQ(j["a"]["runs"], 1);
  ASSERT_EQ(j["rows"].size(), c.rows.size());
  for (const char* key :
       {"group", "metric", "unit", "better", "basis", "op", "bytes", "phase", "n_a", "n_b", "a",
        "b", "ratio", "ci_low", "ci_high", "threshold", "verdict", "runs_needed"}) {
    EXPECT_TRUE(j["rows"][0].contains(key)) << key;
  }
  EXPECT_EQ(j["rows"][0]["verdict"], "regression");
  const std::string html = RenderCompareHtml(c);
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  size_t trs = 0;
  for (size_t at = html.find("<tr class="); at != std::string::npos;
       at = html.find("<tr class=", at + 1))
    ++trs;
  EXPECT_EQ(trs, c.rows.size());
  const std::string junit = RenderCompareJunit(c);
  EXPECT_NE(junit.find("failures=\"3\""), std::string::npos) << junit;
  size_t cases = 0;
  for (size_t at = junit.find("<testcase "); at != std::string::npos;
       at = junit.find("<testcase ", at + 1))
    ++cases;
  EXPECT_EQ(cases, c.rows.size());
}

TEST(ParseThreshold, PercentOrFraction) {
  EXPECT_DOUBLE_EQ(*ParseThreshold("3%"), 0.03);
  EXPECT_DOUBLE_EQ(*ParseThreshold("0.5%"), 0.005);
  EXPECT_DOUBLE_EQ(*ParseThreshold("0.03"), 0.03);
  EXPECT_DOUBLE_EQ(*ParseThreshold("0%"), 0.0);
  EXPECT_FALSE(ParseThreshold("3").ok());  // 300 %: almost surely meant 3 %
  EXPECT_FALSE(ParseThreshold("-1%").ok());
  EXPECT_FALSE(ParseThreshold("abc").ok());
  EXPECT_FALSE(ParseThreshold("%").ok());
  EXPECT_FALSE(ParseThreshold("3 %").ok());
}

// By hand: A {0, 2, 4} and B {1, 3, 5}: means 2 and 3, variances 4 and 4,
// se = sqrt(4/3 + 4/3) = 1.632993, Welch df = 4, t(0.975, 4) = 2.776445.
TEST(RatioOfMeans, WelchIntervalByHand) {
  const double half = 2.776445 * 1.632993;
  // A zero among the values: on the linear scale, relative to mean A.
  std::optional<RatioInterval> lin = RatioOfMeans({0, 2, 4}, {1, 3, 5});
  ASSERT_TRUE(lin);
  EXPECT_FALSE(lin->log_scale);
  EXPECT_DOUBLE_EQ(lin->ratio, 1.5);
  EXPECT_NEAR(lin->low, 1 + (1 - half) / 2, 1e-5);
  EXPECT_NEAR(lin->high, 1 + (1 + half) / 2, 1e-5);
  EXPECT_NEAR(lin->df, 4, 1e-9);
  // The same numbers as logs: the ratio of geometric means.
  std::optional<RatioInterval> log = RatioOfMeans({std::exp(0.0), std::exp(2.0), std::exp(4.0)},
                                                  {std::exp(1.0), std::exp(3.0), std::exp(5.0)});
  ASSERT_TRUE(log);
  EXPECT_TRUE(log->log_scale);
  EXPECT_NEAR(log->ratio, std::exp(1.0), 1e-9);
  EXPECT_NEAR(log->low / std::exp(1 - half), 1, 1e-5);
  EXPECT_NEAR(log->high / std::exp(1 + half), 1, 1e-5);
}

TEST(RatioOfMeans, OneValueASideHasNoSpreadAndOneOnOneSideBorrows) {
  EXPECT_FALSE(RatioOfMeans({10}, {9}));
  EXPECT_FALSE(RatioOfMeans({}, {9, 10}));
  EXPECT_FALSE(RatioOfMeans({0, 0}, {1, 2}));  // mean A 0: no ratio
  std::optional<RatioInterval> point = RatioOfMeans({10, 10, 10}, {9.5, 9.5});
  ASSERT_TRUE(point);
  EXPECT_DOUBLE_EQ(point->ratio, 0.95);
  EXPECT_DOUBLE_EQ(point->low, 0.95);
  EXPECT_DOUBLE_EQ(point->high, 0.95);
  std::optional<RatioInterval> one = RatioOfMeans({10, 11, 12}, {8});
  ASSERT_TRUE(one);
  EXPECT_DOUBLE_EQ(one->df, 2);  // the campaign's three values
  EXPECT_LT(one->low, one->ratio);
}

TEST(BatchMeans, ConsecutiveBatchesTheLastTakingTheRest) {
  EXPECT_EQ(BatchMeans({1, 2, 3, 4, 5, 6, 7}, 3), (std::vector<double>{1.5, 3.5, 6}));
  EXPECT_EQ(BatchMeans({1, 2, 3, 4, 5}, 10), (std::vector<double>{1.5, 4}));
  EXPECT_TRUE(BatchMeans({1, 2, 3}, 10).empty());
}

TEST(RunsNeeded, GrowsAsTheChangeNearsTheThreshold) {
  RatioInterval far{.ratio = 1.0, .low = 0.9, .high = 1.1, .spread = 0.05, .df = 2};
  RatioInterval near = far;
  near.ratio = 1.02;
  std::optional<int> n_far = RunsNeeded(far, 0.05), n_near = RunsNeeded(near, 0.05);
  ASSERT_TRUE(n_far && n_near);
  EXPECT_LT(*n_far, *n_near);
  // Enough: the half-width with n_far a side undercuts the 5 % margin.
  EXPECT_LT(StudentT(0.975, 2.0 * *n_far - 2) * 0.05 * std::sqrt(2.0 / *n_far), std::log(1.05));
  RatioInterval on = far;
  on.ratio = 1.05;
  EXPECT_FALSE(RunsNeeded(on, 0.05));
  RatioInterval exact = far;
  exact.spread = 0;
  EXPECT_EQ(RunsNeeded(exact, 0.05), 0);
}

}  // namespace
}  // namespace fdrill

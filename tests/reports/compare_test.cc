// fdrill compare's statistics and verdicts on synthetic A/B runs with planted
// changes (synthetic_run.h): 400 MB all_reduce, phases baseline, slow-link and
// recovery, a few hundred iterations each.
#include "reports/compare.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/ab_stats.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::SyntheticRun;
using reports_test::TempDir;

SyntheticRun Synth(double speed, double noise, uint32_t seed) {
  SyntheticRun run = SyntheticRun::Standard();
  run.speed = speed;
  run.noise = noise;
  run.seed = seed;
  return run;
}

Comparison CompareSynthetic(const SyntheticRun& a, const SyntheticRun& b,
                            const CompareOptions& options = {}) {
  TempDir da, db;
  a.WriteTo(da.path());
  b.WriteTo(db.path());
  Result<Comparison> c = CompareRunDirs(da.path().string(), db.path().string(), options);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : Comparison{};
}

void ExpectEveryRow(const Comparison& c, CompareVerdict verdict) {
  ASSERT_EQ(c.rows.size(), 3u);  // one op and size, three phases
  for (const CompareRow& r : c.rows) {
    EXPECT_EQ(r.verdict, verdict) << r.phase << ": ratio " << r.ratio.value_or(-1) << " CI "
                                  << r.ci_low.value_or(-1) << "–" << r.ci_high.value_or(-1) << " p "
                                  << r.p_value.value_or(-1);
  }
}

TEST(Compare, FivePercentRegressionWithOnePercentNoiseIsFlagged) {
  Comparison c = CompareSynthetic(Synth(1.0, 0.01, 1), Synth(0.95, 0.01, 2));
  ExpectEveryRow(c, CompareVerdict::kRegression);
  EXPECT_EQ(c.overall, CompareVerdict::kRegression);
  EXPECT_EQ(ExitCodeForComparison(c), 1);
  const CompareRow& baseline = c.rows[0];
  EXPECT_EQ(baseline.op, "all_reduce");
  EXPECT_EQ(baseline.bytes, reports_test::kBytes);
  EXPECT_EQ(baseline.phase, "baseline");
  EXPECT_NEAR(*baseline.ratio, 0.95, 0.005);
  EXPECT_LT(*baseline.ci_low, *baseline.ratio);
  EXPECT_GT(*baseline.ci_high, *baseline.ratio);
  EXPECT_LT(*baseline.ci_high, 0.97);
  EXPECT_LT(*baseline.p_value, 1e-6);
}

TEST(Compare, NoChangeWithFivePercentNoiseIsNotFlagged) {
  Comparison c = CompareSynthetic(Synth(1.0, 0.05, 1), Synth(1.0, 0.05, 2));
  ExpectEveryRow(c, CompareVerdict::kNoChange);
  EXPECT_EQ(c.overall, CompareVerdict::kNoChange);
  EXPECT_EQ(ExitCodeForComparison(c), 0);
  for (const CompareRow& r : c.rows) EXPECT_NEAR(*r.ratio, 1.0, 0.02) << r.phase;
}

TEST(Compare, FivePercentImprovementIsFlagged) {
  Comparison c = CompareSynthetic(Synth(1.0, 0.01, 1), Synth(1.05, 0.01, 2));
  ExpectEveryRow(c, CompareVerdict::kImprovement);
  EXPECT_EQ(c.overall, CompareVerdict::kImprovement);
  EXPECT_EQ(ExitCodeForComparison(c), 0);
}

TEST(Compare, AChangeBelowTheThresholdIsNoChange) {
  CompareOptions wide;
  wide.threshold = 0.10;
  Comparison c = CompareSynthetic(Synth(1.0, 0.01, 1), Synth(0.95, 0.01, 2), wide);
  ExpectEveryRow(c, CompareVerdict::kNoChange);
  EXPECT_EQ(ExitCodeForComparison(c), 0);
}

TEST(Compare, IsDeterministic) {
  const SyntheticRun a = Synth(1.0, 0.05, 1), b = Synth(0.98, 0.05, 2);
  Comparison first = CompareSynthetic(a, b);
  Comparison second = CompareSynthetic(a, b);
  ASSERT_EQ(first.rows.size(), second.rows.size());
  for (size_t i = 0; i < first.rows.size(); ++i) {
    EXPECT_EQ(*first.rows[i].ci_low, *second.rows[i].ci_low);
    EXPECT_EQ(*first.rows[i].ci_high, *second.rows[i].ci_high);
  }
  EXPECT_EQ(RenderCompareMarkdown(first).substr(RenderCompareMarkdown(first).find("| op")),
            RenderCompareMarkdown(second).substr(RenderCompareMarkdown(second).find("| op")));
}

TEST(Compare, PhasesOrSizesOnlyOneRunHasAreNotCompared) {
  SyntheticRun a = Synth(1.0, 0.01, 1);
  SyntheticRun b = Synth(1.0, 0.01, 2);
  b.DropEvents("phase_start");
  b.DropEvents("phase_end");
  b.AddEvent(0.5, "phase_start", {{"phase", "baseline"}});
  b.AddEvent(40.5, "phase_end", {{"phase", "baseline"}});
  Comparison c = CompareSynthetic(a, b);
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].phase, "baseline");
  EXPECT_EQ(c.rows[1].verdict, CompareVerdict::kNotCompared);
  EXPECT_EQ(c.rows[1].n_b, 0);
  EXPECT_EQ(c.rows[1].note, "fewer than 2 iterations in B");
  EXPECT_EQ(c.overall, CompareVerdict::kNoChange);
}

TEST(Compare, RunWithoutPhasesIsOneWholeRunRow) {
  SyntheticRun a = Synth(1.0, 0.01, 1), b = Synth(0.9, 0.01, 2);
  for (SyntheticRun* r : {&a, &b}) {
    r->DropEvents("phase_start");
    r->DropEvents("phase_end");
  }
  Comparison c = CompareSynthetic(a, b);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].phase, "whole run");
  EXPECT_EQ(c.rows[0].verdict, CompareVerdict::kRegression);
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

TEST(Compare, MarkdownAndJsonCarryEveryRow) {
  Comparison c = CompareSynthetic(Synth(1.0, 0.01, 1), Synth(0.95, 0.01, 2));
  const std::string md = RenderCompareMarkdown(c);
  EXPECT_TRUE(md.starts_with("# fdrill compare — regression")) << md;
  EXPECT_NE(md.find("| all_reduce | 400000000 | baseline |"), std::string::npos) << md;
  EXPECT_NE(md.find("**regression**"), std::string::npos);
  EXPECT_NE(md.find("3 of 3 rows regressed"), std::string::npos) << md;
  nlohmann::json j = nlohmann::json::parse(RenderCompareJson(c));
  EXPECT_EQ(j["verdict"], "regression");
  EXPECT_EQ(j["method"]["resamples"], 2000);
  EXPECT_EQ(j["method"]["threshold"], 0.03);
  ASSERT_EQ(j["rows"].size(), 3u);
  for (const char* key : {"op", "bytes", "phase", "n_a", "n_b", "median_a_gbps", "median_b_gbps",
                          "ratio", "ci_low", "ci_high", "p_value", "verdict"}) {
    EXPECT_TRUE(j["rows"][0].contains(key)) << key;
  }
  EXPECT_EQ(j["rows"][0]["verdict"], "regression");
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

TEST(MannWhitneyU, MatchesScipyAsymptotic) {
  // scipy.stats.mannwhitneyu(b, a, method="asymptotic"): U 25, p 0.012185.
  std::optional<MannWhitney> r = MannWhitneyU({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->u, 25);
  EXPECT_NEAR(r->p_value, 0.012185, 1e-5);
  // With ties, U by counting pairs (a tie counts 1/2) and the tie-corrected
  // variance: U 14, p 0.374857.
  r = MannWhitneyU({1, 2, 2, 3, 4}, {2, 3, 3, 5});
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->u, 14);
  EXPECT_NEAR(r->p_value, 0.374857, 1e-6);
  EXPECT_DOUBLE_EQ(MannWhitneyU({4, 4, 4}, {4, 4})->p_value, 1.0);
  EXPECT_FALSE(MannWhitneyU({}, {1}));
}

TEST(BootstrapRatioOfMedians, ConstantSamplesGiveAPointAndSeedsRepeat) {
  std::optional<Interval> ci = BootstrapRatioOfMedians({10, 10, 10}, {9.5, 9.5}, 500, 1);
  ASSERT_TRUE(ci);
  EXPECT_DOUBLE_EQ(ci->low, 0.95);
  EXPECT_DOUBLE_EQ(ci->high, 0.95);
  std::vector<double> a, b;
  for (int i = 0; i < 101; ++i) {
    a.push_back(100 + (i * 37 % 101) * 0.1);
    b.push_back(100 + (i * 53 % 101) * 0.1);
  }
  std::optional<Interval> x = BootstrapRatioOfMedians(a, b, 2000, 42);
  std::optional<Interval> y = BootstrapRatioOfMedians(a, b, 2000, 42);
  ASSERT_TRUE(x && y);
  EXPECT_EQ(x->low, y->low);
  EXPECT_EQ(x->high, y->high);
  EXPECT_LT(x->low, 1.0);  // the same values shuffled: the interval holds 1
  EXPECT_GT(x->high, 1.0);
  EXPECT_FALSE(BootstrapRatioOfMedians({}, b, 10, 1));
  EXPECT_FALSE(BootstrapRatioOfMedians({0, 0}, b, 10, 1));
}

}  // namespace
}  // namespace fdrill

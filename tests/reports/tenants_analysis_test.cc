// Tenants (workloads:): each analysed on its own iterations against its own
// baseline, the top level the first tenant's, expectations per tenant and
// per phase. Two synthetic runs (synthetic_run.h) become one run directory
// with two tenants, a's records tagged "a" and b's "b" (ranks 0..3 in both,
// as two mpiruns number them).
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/analysis.h"
#include "reports/html_report.h"
#include "reports/json_report.h"
#include "reports/markdown_report.h"
#include "reports/run_dir.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using nlohmann::json;
using reports_test::SyntheticRun;
using reports_test::TempDir;
using reports_test::WriteText;

// a's run (its events and plan) with b's records added; b's records before
// `b_from_s` are left out (a tenant that arrived then).
Summary AnalyzeTenants(SyntheticRun a, const SyntheticRun& b, const std::string& b_start = "",
                       double b_from_s = 0, RunData* out = nullptr) {
  json wb = {{"name", "b"}, {"nodes", {"n4", "n5", "n6", "n7"}}, {"ranks", 4}};
  if (!b_start.empty()) wb["start"] = b_start;
  a.plan["workloads"] = json::array(
      {{{"name", "a"}, {"nodes", {"n0", "n1", "n2", "n3"}}, {"ranks", 4}}, std::move(wb)});
  TempDir dir;
  a.WriteTo(dir.path());
  std::string lines;
  for (const std::string& l : a.MetricLines()) {
    json j = json::parse(l);
    j["workload"] = "a";
    lines += j.dump() + "\n";
  }
  for (const std::string& l : b.MetricLines()) {
    json j = json::parse(l);
    if (j["t"].get<double>() < b_from_s) continue;
    j["workload"] = "b";
    j["node"] = "n" + std::to_string(4 + j["rank"].get<int>());
    lines += j.dump() + "\n";
  }
  WriteText(dir.path() / "metrics.jsonl", lines);
  Result<RunData> data = LoadRunDir(dir.path().string());
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  if (data.ok() && out != nullptr) *out = *data;
  return data.ok() ? Analyze(*data) : Summary{};
}

const ExpectationResult* Find(const Summary& s, const std::string& name) {
  auto it = std::find_if(s.expectations.begin(), s.expectations.end(),
                         [&](const ExpectationResult& e) { return e.name == name; });
  return it == s.expectations.end() ? nullptr : &*it;
}

SyntheticRun Unhurt() {
  SyntheticRun b = SyntheticRun::Standard();
  b.seed = 11;
  return b;
}

TEST(TenantAnalysis, EachTenantIsMeasuredOnItsOwnSeries) {
  SyntheticRun a = SyntheticRun::SlowN2(22.0);
  a.plan["expectations"]["workloads"] = {{"b", {{"max_slowdown", 1.1}}}};
  RunData run;
  const Summary s = AnalyzeTenants(a, Unhurt(), "", 0, &run);
  EXPECT_TRUE(s.errors.empty()) << s.errors[0];
  // The top level is a's: ranks numbered 0..3 in both tenants do not mix.
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_NEAR(*s.faults[0].slowdown, 3.0, 0.05);
  ASSERT_EQ(s.faults[0].workloads.size(), 2u);
  const WorkloadEffect& on_a = s.faults[0].workloads[0];
  const WorkloadEffect& on_b = s.faults[0].workloads[1];
  EXPECT_EQ(on_a.workload, "a");
  EXPECT_NEAR(*on_a.slowdown, 3.0, 0.05);
  EXPECT_NEAR(*on_a.time_to_recover_s, 2.0, 0.2);
  EXPECT_EQ(on_b.workload, "b");
  EXPECT_NEAR(*on_b.slowdown, 1.0, 0.02);
  EXPECT_LT(*on_b.stall_ms, 61 * 1.02);  // one ordinary iteration
  ASSERT_EQ(s.workloads.size(), 2u);
  EXPECT_EQ(s.workloads[1].name, "b");
  EXPECT_NEAR(*s.workloads[1].baseline.busbw_median, reports_test::kBaselineGbps, 0.1);
  // b's phases, each with its slowdown against b's baseline.
  ASSERT_FALSE(s.workloads[1].phases.empty());
  for (const PhaseStats& p : s.workloads[1].phases) EXPECT_NEAR(*p.slowdown, 1.0, 0.03) << p.name;
  const ExpectationResult* e = Find(s, "workloads.b.slowdown[slow-link]");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->pass);
  EXPECT_EQ(s.verdict, Verdict::kPass);
  // summary.json and report.md carry them.
  const json j = json::parse(RenderSummaryJson(s));
  EXPECT_NEAR(j["faults"][0]["workloads"]["b"]["slowdown"].get<double>(), 1.0, 0.02);
  EXPECT_EQ(j["workloads"]["a"]["ranks"], 4);
  EXPECT_NE(RenderMarkdown(s).find("| slow-link | b | 1.0"), std::string::npos);
  // report.html: the Workloads section, and a line per tenant's rank (ranks
  // 0..3 of a and of b are eight series, not four).
  const std::string html = RenderHtml(s, run, HtmlOptions{});
  EXPECT_NE(html.find("<h2>Workloads</h2>"), std::string::npos);
  EXPECT_NE(html.find("b rank 3 (n7)"), std::string::npos);
  EXPECT_NE(html.find("a rank 3 (n3)"), std::string::npos);
}

TEST(TenantAnalysis, ATenantHurtTooFailsItsExpectation) {
  SyntheticRun a = SyntheticRun::SlowN2(22.0);
  a.plan["expectations"]["workloads"] = {{"b", {{"max_slowdown", 1.1}}}};
  SyntheticRun b = SyntheticRun::SlowN2(22.0);
  b.seed = 11;
  const Summary s = AnalyzeTenants(a, b);
  const ExpectationResult* e = Find(s, "workloads.b.slowdown[slow-link]");
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->pass);
  EXPECT_NEAR(std::get<double>(e->measured), 3.0, 0.05);
  EXPECT_EQ(s.verdict, Verdict::kFail);
}

TEST(TenantAnalysis, PhaseSlowdownExpectation) {
  // a three times slower through the fault phase's busbw p50.
  SyntheticRun a = SyntheticRun::SlowN2(20.0);
  a.plan["expectations"]["metrics"] =
      json::array({{{"metric", "slowdown"}, {"phase", "slow-link"}, {"min", 2.5}},
                   {{"metric", "slowdown"}, {"phase", "never"}, {"min", 1.0}}});
  a.plan["expectations"]["workloads"] = {
      {"b",
       {{"metrics",
         json::array({{{"metric", "slowdown"}, {"phase", "slow-link"}, {"max", 1.1}}})}}}};
  const Summary s = AnalyzeTenants(a, Unhurt());
  const ExpectationResult* on_a = Find(s, "min slowdown[phase slow-link]");
  ASSERT_NE(on_a, nullptr);
  EXPECT_TRUE(on_a->pass) << std::get<double>(on_a->measured);
  const ExpectationResult* never = Find(s, "min slowdown[phase never]");
  ASSERT_NE(never, nullptr);
  EXPECT_FALSE(never->pass);  // a phase that never ran has no measurement
  const ExpectationResult* on_b = Find(s, "max workloads.b.slowdown[phase slow-link]");
  ASSERT_NE(on_b, nullptr);
  EXPECT_TRUE(on_b->pass);
}

TEST(TenantAnalysis, ALateTenantHasNoBaselineAndThatIsNoError) {
  const Summary s = AnalyzeTenants(SyntheticRun::SlowN2(22.0), Unhurt(), "slow-link", 15.0);
  EXPECT_TRUE(s.errors.empty()) << s.errors[0];
  ASSERT_EQ(s.workloads.size(), 2u);
  EXPECT_EQ(s.workloads[1].start, "slow-link");
  EXPECT_EQ(s.workloads[1].baseline.count, 0);
  EXPECT_FALSE(s.faults[0].workloads[1].slowdown.has_value());
  EXPECT_EQ(s.verdict, Verdict::kPass);
}

// A job the fault never touched reads 1.00 even when its iterations are
// skewed (about one in four three times slower, before and during the
// fault alike): the baseline is measured as the window is, bytes over time.
// Against the baseline's median it read above 1.2.
TEST(TenantAnalysis, AnUntouchedJobReadsOneWhenItsIterationsAreSkewed) {
  SyntheticRun run = SyntheticRun::Standard();
  for (int k = 4; k < 160; ++k) run.slow.push_back({k / 4.0, k / 4.0 + 0.03, 3.0, "n1"});
  TempDir dir;
  run.WriteTo(dir.path());
  Result<RunData> data = LoadRunDir(dir.path().string());
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const Summary s = Analyze(*data);
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_NEAR(*s.faults[0].slowdown, 1.0, 0.03);
  EXPECT_GT(*s.baseline.busbw_median / *s.baseline.busbw_mean, 1.2);  // the skew is real
}

}  // namespace
}  // namespace fdrill

// Loading a run directory: what is decoded, and that every malformed line is
// an error naming file:line.
#include "reports/run_dir.h"

#include <gtest/gtest.h>

#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::SyntheticRun;
using reports_test::TempDir;
using reports_test::WriteText;

TEST(LoadRunDir, DecodesPlanEventsAndMetrics) {
  TempDir dir;
  SyntheticRun::Standard().WriteTo(dir.path());
  Result<RunData> run = LoadRunDir(dir.path().string());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->plan.name, "synthetic");
  EXPECT_EQ(run->plan.ranks, 4);
  EXPECT_EQ(run->plan.recovery_window_iters, 5);
  EXPECT_EQ(run->plan.expectations.max_time_to_recover_s, 10.0);
  EXPECT_EQ(run->plan.expectations.no_residue, true);
  ASSERT_FALSE(run->events.empty());
  EXPECT_EQ(run->events.front().type, "drill_start");
  EXPECT_EQ(run->events.back().status, "completed");
  ASSERT_FALSE(run->metrics.empty());
  EXPECT_EQ(run->metrics.size() % 4, 0u);
  EXPECT_EQ(run->metrics[2].node, "n2");
  EXPECT_EQ(run->metrics[2].op, "all_reduce");
  EXPECT_TRUE(run->load_notes.empty());
}

TEST(LoadRunDir, MalformedMetricsLineNamesFileAndLine) {
  TempDir dir;
  SyntheticRun run = SyntheticRun::Standard();
  run.WriteTo(dir.path());
  std::vector<std::string> lines = run.MetricLines();
  WriteText(dir.path() / "metrics.jsonl", lines[0] + "\n" + lines[1] + "\n{\"rank\": 0, \"iter\n");
  Result<RunData> loaded = LoadRunDir(dir.path().string());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find("metrics.jsonl:3:"), std::string::npos)
      << loaded.status().message();
}

TEST(ParseMetricLine, MissingOrMistypedKeysAreErrors) {
  auto missing = ParseMetricLine(R"({"rank":0,"iter":1,"bytes":8,"wrong":0,"t":1.5})", "m:7");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "m:7: key \"time_ms\" is missing");
  auto mistyped =
      ParseMetricLine(R"({"rank":"zero","iter":1,"bytes":8,"time_ms":1,"wrong":0,"t":1.5})", "m:8");
  EXPECT_EQ(mistyped.status().message(), "m:8: key \"rank\" is not an integer");
  auto zero_time =
      ParseMetricLine(R"({"rank":0,"iter":1,"bytes":8,"time_ms":0,"wrong":0,"t":1.5})", "m:9");
  EXPECT_FALSE(zero_time.ok());
  EXPECT_FALSE(ParseMetricLine("[1,2]", "m:10").ok());
  auto good = ParseMetricLine(
      R"({"rank":2,"host":"h2","iter":1,"bytes":8,"time_ms":1,"wrong":3,"t":1.5})", "m:11");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->node, "h2");  // no controller-side node: the host names it
  EXPECT_EQ(good->wrong, 3);
}

TEST(LoadRunDir, MalformedEventLineNamesFileAndLine) {
  TempDir dir;
  SyntheticRun::Standard().WriteTo(dir.path());
  WriteText(dir.path() / "events.jsonl",
            "{\"t\":0,\"type\":\"drill_start\",\"name\":\"x\"}\n\n"
            "{\"t\":1,\"type\":\"fault_applied\",\"kind\":\"link_rate\"}\n");
  Result<RunData> loaded = LoadRunDir(dir.path().string());
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("events.jsonl:3: key \"id\" is missing"),
            std::string::npos)
      << loaded.status().message();
}

TEST(ParseEventLine, DecodesResidueAndRejectsUnknownEndStatus) {
  auto residue = ParseEventLine(
      R"({"t":9,"type":"residue","items":[{"node":"n1","object":"qdisc fab0","before":"noqueue","after":{"kind":"tbf"}}]})",
      "e:1");
  ASSERT_TRUE(residue.ok()) << residue.status().ToString();
  ASSERT_EQ(residue->items.size(), 1u);
  EXPECT_EQ(residue->items[0].object, "qdisc fab0");
  EXPECT_EQ(residue->items[0].after, R"({"kind":"tbf"})");
  EXPECT_FALSE(ParseEventLine(R"({"t":9,"type":"residue","items":[{"node":"n1"}]})", "e:2").ok());
  EXPECT_FALSE(ParseEventLine(R"({"t":9,"type":"drill_end","status":"done"})", "e:3").ok());
  EXPECT_FALSE(ParseEventLine(R"({"t":9,"type":"workload_exit","node":"n0"})", "e:4").ok());
  EXPECT_TRUE(ParseEventLine(R"({"t":9,"type":"agent_connected","node":"n0"})", "e:5").ok());
}

TEST(ParsePlan, ExpectationsMayBeNullAndRecoveryWindowDefaultsToFive) {
  auto plan = ParsePlan(R"({"name":"q","expectations":{"max_slowdown":null,"data_intact":true}})",
                        "plan.json");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_FALSE(plan->expectations.max_slowdown.has_value());
  EXPECT_EQ(plan->expectations.data_intact, true);
  EXPECT_EQ(plan->recovery_window_iters, 5);
  auto bad = ParsePlan(R"({"expectations":{"max_slowdown":"2x"}})", "plan.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("max_slowdown"), std::string::npos);
  EXPECT_FALSE(ParsePlan(R"({"recovery_window_iters":0})", "plan.json").ok());
}

// A tenant's metric limits are read as strictly as the drill's own.
TEST(ParsePlan, MetricLimitsOfTheDrillAndOfATenantAreReadAlike) {
  auto plan = ParsePlan(
      R"({"expectations":{"metrics":[{"metric":"slowdown","phase":"noise","min":1.3}],
          "workloads":{"b":{"max_slowdown":1.1,
                            "metrics":[{"metric":"stall_ms","fault":"cap","max":500}]}}}})",
      "plan.json");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->expectations.metrics[0].phase, "noise");
  ASSERT_EQ(plan->expectations.workloads.size(), 1u);
  EXPECT_EQ(plan->expectations.workloads[0].metrics[0].fault, "cap");
  for (const char* metrics : {R"("x")", R"([{"max":1}])", R"([7])"}) {
    const std::string text =
        std::string(R"({"expectations":{"workloads":{"b":{"metrics":)") + metrics + "}}}}";
    auto bad = ParsePlan(text, "plan.json");
    ASSERT_FALSE(bad.ok()) << metrics;
    EXPECT_NE(bad.status().message().find("plan.json: expectations.workloads.b.metrics"),
              std::string::npos)
        << bad.status().message();
    const std::string top = std::string(R"({"expectations":{"metrics":)") + metrics + "}}";
    auto bad_top = ParsePlan(top, "plan.json");
    ASSERT_FALSE(bad_top.ok()) << metrics;
    EXPECT_NE(bad_top.status().message().find("plan.json: expectations.metrics"),
              std::string::npos);
  }
}

TEST(LoadRunDir, MissingPlanIsAnErrorMissingMetricsIsANote) {
  TempDir dir;
  SyntheticRun::Standard().WriteTo(dir.path());
  std::filesystem::remove(dir.path() / "metrics.jsonl");
  Result<RunData> run = LoadRunDir(dir.path().string());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_TRUE(run->metrics.empty());
  ASSERT_EQ(run->load_notes.size(), 1u);
  std::filesystem::remove(dir.path() / "plan.json");
  EXPECT_EQ(LoadRunDir(dir.path().string()).status().code(), StatusCode::kNotFound);
}

// A delta before any whole sample of its node is dropped; other events and
// other nodes' samples stay in order.
TEST(MakeCountersWhole, AppliesDeltasToTheNodesLastWholeSample) {
  std::vector<Event> events;
  for (const char* line : {
           R"({"t":1,"type":"counters","node":"n1","counters":{"a":1},"delta":true})",
           R"({"t":2,"type":"counters","node":"n1","counters":{"a":2,"b":0}})",
           R"({"t":2.5,"type":"phase_start","phase":"p"})",
           R"({"t":3,"type":"counters","node":"n2","counters":{"a":9},"delta":true})",
           R"({"t":4,"type":"counters","node":"n1","counters":{"b":3},"delta":true})",
           R"({"t":5,"type":"counters","node":"n1","counters":{"a":5}})",
           R"({"t":6,"type":"counters","node":"n1","counters":{},"delta":true})",
       }) {
    auto e = ParseEventLine(line, "events.jsonl");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    events.push_back(*e);
  }
  MakeCountersWhole(&events);
  using Counters = std::vector<std::pair<std::string, double>>;
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].t, 2);
  EXPECT_EQ(events[0].counters, (Counters{{"a", 2}, {"b", 0}}));
  EXPECT_EQ(events[1].type, "phase_start");
  EXPECT_EQ(events[2].t, 4);
  EXPECT_EQ(events[2].counters, (Counters{{"a", 2}, {"b", 3}}));
  EXPECT_EQ(events[3].counters, (Counters{{"a", 5}}));  // a whole one replaces
  EXPECT_EQ(events[4].t, 6);
  EXPECT_EQ(events[4].counters, (Counters{{"a", 5}}));
}

}  // namespace
}  // namespace fdrill

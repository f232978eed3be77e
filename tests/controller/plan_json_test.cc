// PlanJson: plan.json, what the report measures a run against
// (docs/reference/formats.md) — the nodes, ranks and fabric, every
// expectation (null where the scenario sets none), the stop conditions,
// the predicted job outcomes, and with tenants each tenant's nodes, ranks
// and arrival. Built from the scenario and its workload supervisors
// (tests/controller/drill_fixture.h); nothing runs.
#include "harness/controller/plan_json.h"

#include <string>

#include <gtest/gtest.h>

#include "common/host/host.h"
#include "tests/controller/drill_fixture.h"

namespace fdrill {
namespace {

class NoProcesses final : public ProcessRunner {
 public:
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration) override {
    return ProgramMissing(argv[0]);
  }
};

class PlanJsonTest : public controller_test::DrillFixture {
 protected:
  PlanJsonTest() : DrillFixture("fdrill-plan-", {"n0", "n1", "n2", "n3"}) {}
  Json Plan(const std::string& yaml, const std::map<std::string, std::string>& predicted = {}) {
    auto s = ParseScenario(yaml, "drill.yaml");
    EXPECT_TRUE(s.ok()) << s.status().message();
    if (!s.ok()) return nullptr;
    s_ = std::move(s).value();
    workloads_.clear();
    const auto specs = s_.Workloads();
    for (size_t i = 0; i < specs.size(); ++i)
      workloads_.push_back(std::make_unique<WorkloadSupervisor>(ctx_, specs[i], i, runner_));
    return PlanJson(s_, workloads_, predicted);
  }
  NoProcesses runner_;
};

// One job: its nodes and ranks, the fabric by name, the expectations the
// scenario set and nulls for those it did not, the stop conditions, and the
// predictions as given.
TEST_F(PlanJsonTest, OneJobsPlanHoldsItsExpectationsAndStopConditions) {
  const Json plan = Plan(R"(name: slow
fabric: {emulated: {nodes: 2}}
workload: {size: 4K, ranks_per_node: 2}
phases:
  - {name: baseline, duration: 2s}
  - name: cut
    duration: 2s
    faults:
      - {id: cap, kind: link_rate, node: n1, params: {interface: fab0, rate: 100mbit}}
  - {name: recovery, duration: 2s}
safety:
  stop: {max_iteration_time: 2s, max_wrong_elements: 0}
expect:
  max_slowdown: 20
  no_residue: true
  metrics:
    - {metric: time_to_impact_s, fault: cap, max: 3}
)",
                         {{"cap", "survives"}});
  ASSERT_TRUE(plan.is_object());
  EXPECT_EQ(plan["name"], "slow");
  EXPECT_EQ(plan["nodes"], Json::array({"n0", "n1"}));
  EXPECT_EQ(plan["ranks"], 4);
  EXPECT_EQ(plan["fabric"], "emulated n0..n1");
  EXPECT_EQ(plan["rate_unit"], "GB/s");
  const Json& e = plan["expectations"];
  EXPECT_EQ(e["max_slowdown"], 20.0);
  EXPECT_TRUE(e["max_time_to_recover_s"].is_null());
  EXPECT_EQ(e["no_residue"], true);
  EXPECT_TRUE(e["job"].is_null());
  EXPECT_FALSE(e.contains("workloads"));
  ASSERT_EQ(e["metrics"].size(), 1u);
  EXPECT_EQ(e["metrics"][0],
            (Json{{"metric", "time_to_impact_s"}, {"fault", "cap"}, {"max", 3.0}}));
  EXPECT_EQ(plan["stop"], (Json{{"max_iteration_time_s", 2.0}, {"max_wrong_elements", 0}}));
  EXPECT_EQ(plan["predicted_job"], (Json{{"cap", "survives"}}));
  EXPECT_FALSE(plan.contains("workloads"));
}

// Tenants: each with its nodes and ranks, a late one with its phase; the
// top-level ranks are the first tenant's; per-tenant limits under
// expectations.workloads.
TEST_F(PlanJsonTest, TenantsAreListedWithTheirNodesRanksAndArrival) {
  const Json plan = Plan(R"(name: shared
fabric: {emulated: {nodes: 4}}
workloads:
  a: {nodes: "n[0-1]", size: 4K}
  b: {nodes: "n[2-3]", size: 4K, ranks_per_node: 2, start: noise}
phases:
  - {name: baseline, duration: 2s}
  - {name: noise, duration: 2s}
  - {name: end, duration: 2s}
expect:
  workloads:
    b: {max_slowdown: 1.1}
)");
  ASSERT_TRUE(plan.is_object());
  EXPECT_EQ(plan["ranks"], 2);
  ASSERT_EQ(plan["workloads"].size(), 2u);
  EXPECT_EQ(plan["workloads"][0], (Json{{"name", "a"}, {"nodes", {"n0", "n1"}}, {"ranks", 2}}));
  EXPECT_EQ(plan["workloads"][1]["ranks"], 4);
  EXPECT_EQ(plan["workloads"][1]["start"], "noise");
  const Json& b = plan["expectations"]["workloads"]["b"];
  EXPECT_EQ(b["max_slowdown"], 1.1);
  EXPECT_TRUE(b["max_time_to_recover_s"].is_null());
  EXPECT_TRUE(b["metrics"].empty());
}

// A command with output none reports no iterations: the plan still counts
// one rank (the report divides by it), its rate fdrill-collective's unit.
TEST_F(PlanJsonTest, AJobThatReportsNothingStillPlansOneRank) {
  const Json plan = Plan(R"(name: own
fabric: {emulated: {nodes: 2}}
workload: {command: [/usr/bin/true], output: none}
phases:
  - {name: baseline, duration: 2s}
  - {name: end, duration: 2s}
)");
  ASSERT_TRUE(plan.is_object());
  EXPECT_EQ(plan["ranks"], 1);
  EXPECT_EQ(plan["rate_unit"], "GB/s");
}

}  // namespace
}  // namespace fdrill

// workloads: several tenants in one drill — how they load, and every way a
// user can get them wrong refused with the file, line and what is right.
#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/scenario/scenario.h"
#include "tests/scenario/scenario_text.h"

namespace fdrill {
namespace {

using scenario_test::ErrorOf;
using scenario_test::Load;
using scenario_test::Replace;
using ::testing::HasSubstr;

constexpr char kTwo[] = R"(name: t
fabric:
  emulated: {nodes: 8}
workloads:
  a: {nodes: "n[0-3]", size: 1M}
  b: {nodes: [n7, n4, n5], op: alltoall, ranks_per_node: 2}
phases:
  - name: baseline
    duration: 5s
  - name: hit
    duration: 2s
    faults:
      - {id: cap, kind: link_rate, node: n1, params: {interface: fab0, rate: 100mbit}}
  - name: recovery
    duration: 5s
expect:
  workloads:
    b:
      max_slowdown: 1.1
      max_time_to_recover: 2s
      metrics:
        - {metric: stall_ms, fault: cap, max: 500}
)";

TEST(Tenants, LoadInFileOrderEachOnItsNodesInInventoryOrder) {
  const Scenario s = Load(kTwo);
  ASSERT_EQ(s.tenants.size(), 2u);
  EXPECT_EQ(s.tenants[0].name, "a");
  EXPECT_EQ(s.tenants[0].nodes, (std::vector<std::string>{"n0", "n1", "n2", "n3"}));
  EXPECT_EQ(s.tenants[0].size_bytes, 1u << 20);
  EXPECT_EQ(s.tenants[1].name, "b");
  EXPECT_EQ(s.tenants[1].nodes, (std::vector<std::string>{"n4", "n5", "n7"}));
  EXPECT_EQ(s.tenants[1].op, "alltoall");
  EXPECT_EQ(s.tenants[1].ranks_per_node, 2);
  EXPECT_EQ(s.tenants[1].size_bytes, 4u << 20);  // workload's default
  // The drill's `workload` is the first tenant; Workloads() is every tenant.
  EXPECT_EQ(s.workload.name, "a");
  EXPECT_EQ(s.Workloads().size(), 2u);
  ASSERT_EQ(s.expect.workloads.size(), 1u);
  EXPECT_EQ(s.expect.workloads[0].first, "b");
  EXPECT_EQ(s.expect.workloads[0].second.max_slowdown, 1.1);
  EXPECT_EQ(s.expect.workloads[0].second.max_time_to_recover_s, 2.0);
  ASSERT_EQ(s.expect.workloads[0].second.metrics.size(), 1u);
  EXPECT_EQ(s.expect.workloads[0].second.metrics[0].fault, "cap");
}

TEST(Tenants, OneWorkloadRunsOnEveryNodeUnnamed) {
  const Scenario s = Load(Replace(Replace(kTwo, R"(workloads:
  a: {nodes: "n[0-3]", size: 1M}
  b: {nodes: [n7, n4, n5], op: alltoall, ranks_per_node: 2}
)",
                                          "workload: {size: 1M}\n"),
                                  R"(  workloads:
    b:
      max_slowdown: 1.1
      max_time_to_recover: 2s
      metrics:
        - {metric: stall_ms, fault: cap, max: 500}
)",
                                  "  max_slowdown: 100\n"));
  const auto all = s.Workloads();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].name, "");
  EXPECT_EQ(all[0].nodes.size(), 8u);
  EXPECT_TRUE(s.tenants.empty());
}

TEST(Tenants, ANodeInTwoTenantsIsRefusedAtItsLine) {
  const std::string e = ErrorOf(Replace(kTwo, "[n7, n4, n5]", "[n7, n3]"));
  EXPECT_EQ(e.rfind("drill.yaml:6:14: workloads.b.nodes: n3 is already workload a's; tenants "
                    "share the fabric, not nodes",
                    0),
            0u)
      << e;
}

TEST(Tenants, WorkloadAndWorkloadsAreExclusive) {
  const std::string e =
      ErrorOf(Replace(kTwo, "workloads:\n  a:", "workload: {size: 1M}\nworkloads:\n  a:"));
  EXPECT_THAT(e, HasSubstr("drill.yaml:6:3: workload and workloads are exclusive"));
}

TEST(Tenants, UnknownNodeListsWhatExists) {
  const std::string e = ErrorOf(Replace(kTwo, "[n7, n4, n5]", "[n7, n9]"));
  EXPECT_THAT(e, HasSubstr("drill.yaml:6:14: workloads.b.nodes: "));
  EXPECT_THAT(e, HasSubstr("n9"));
}

TEST(Tenants, WhatIsOneJobsIsRefusedForATenant) {
  for (const char* key : {"mode: train", "command: [x]", "restart: {max_restarts: 1}"}) {
    const std::string e =
        ErrorOf(Replace(kTwo, "op: alltoall,", std::string(key) + ", op: alltoall,"));
    EXPECT_THAT(e, HasSubstr("tenants run fdrill-collective sweeps")) << key;
  }
  EXPECT_THAT(ErrorOf(Replace(kTwo, "op: alltoall", "op: alltoal")),
              HasSubstr("workloads.b.op \"alltoal\" is not one of"));
  EXPECT_THAT(ErrorOf(Replace(kTwo, "b: {nodes: [n7, n4, n5], ", "b: {")),
              HasSubstr("workloads.b needs nodes:"));
  EXPECT_THAT(ErrorOf(Replace(kTwo, "  b: {", "  b c: {")), HasSubstr("workload name \"b c\""));
  EXPECT_THAT(ErrorOf(Replace(kTwo, "op: alltoall", "size: 3")),
              HasSubstr("workloads.b.size must be a positive multiple of 4 bytes"));
}

TEST(Tenants, OnlyOnTheEmulatedFabric) {
  setenv("SLURM_JOB_NODELIST", "gpu[01-08]", 1);
  const std::string e = ErrorOf(Replace(kTwo, "emulated: {nodes: 8}", "slurm: true"));
  unsetenv("SLURM_JOB_NODELIST");
  EXPECT_THAT(e, HasSubstr("workloads (several tenants) runs on the emulated fabric"));
}

TEST(Tenants, StartNamesALaterPhase) {
  const Scenario s = Load(Replace(kTwo, "op: alltoall,", "op: alltoall, start: hit,"));
  EXPECT_EQ(s.tenants[1].start, "hit");
  EXPECT_THAT(ErrorOf(Replace(kTwo, "op: alltoall,", "op: alltoall, start: hti,")),
              HasSubstr("workloads.b.start: no phase is named \"hti\"; did you mean \"hit\"?"));
  EXPECT_THAT(ErrorOf(Replace(kTwo, "op: alltoall,", "op: alltoall, start: baseline,")),
              HasSubstr("baseline is the first phase"));
  EXPECT_THAT(ErrorOf(Replace(kTwo, "size: 1M}", "size: 1M, start: hit}")),
              HasSubstr("workloads.a.start: the first workload is the one the drill measures"));
}

TEST(Tenants, ExpectNamesATenantAndPerFaultOrPhaseMetricsOnly) {
  EXPECT_THAT(ErrorOf(Replace(kTwo, "    b:\n      max_slowdown", "    c:\n      max_slowdown")),
              HasSubstr("no workload \"c\""));
  EXPECT_THAT(ErrorOf(Replace(kTwo, "{metric: stall_ms, fault: cap, max: 500}",
                              "{metric: residue.count, max: 0}")),
              HasSubstr("unknown metric \"residue.count\""));
  EXPECT_THAT(ErrorOf(Replace(kTwo, "max_slowdown: 1.1", "max_slowdown: 0.5")),
              HasSubstr("expect.workloads.b.max_slowdown must be a number >= 1"));
  // A tenant's slowdown over a phase.
  const Scenario s = Load(Replace(kTwo, "{metric: stall_ms, fault: cap, max: 500}",
                                  "{metric: slowdown, phase: hit, max: 1.2}"));
  EXPECT_EQ(s.expect.workloads[0].second.metrics[0].phase, "hit");
  EXPECT_THAT(ErrorOf(Replace(kTwo, "{metric: stall_ms, fault: cap, max: 500}",
                              "{metric: slowdown, phase: hti, max: 1.2}")),
              HasSubstr("no phase is named \"hti\""));
  EXPECT_THAT(ErrorOf(Replace(kTwo, "{metric: stall_ms, fault: cap, max: 500}",
                              "{metric: stall_ms, phase: hit, max: 1.2}")),
              HasSubstr("phase: goes with metric: slowdown"));
}

TEST(Tenants, ExpectWorkloadsNeedsTenants) {
  const std::string one = Replace(kTwo, R"(workloads:
  a: {nodes: "n[0-3]", size: 1M}
  b: {nodes: [n7, n4, n5], op: alltoall, ranks_per_node: 2}
)",
                                  "workload: {size: 1M}\n");
  EXPECT_THAT(ErrorOf(one), HasSubstr("expect.workloads names tenants of workloads:"));
}

}  // namespace
}  // namespace fdrill

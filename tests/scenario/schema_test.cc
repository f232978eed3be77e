// The scenario schema beyond the basics (loader_test.cc): inventories,
// targets and selectors, windows, ramps, repeats, gates, stop conditions and
// metric expectations. Each error class asserts its message and place.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "harness/scenario/scenario.h"
#include "tests/scenario/scenario_text.h"
#include "workloads/collective.h"

namespace fdrill {
namespace {

// Lines are numbered in the comments: errors are asserted by line:column.
constexpr char kBase[] = R"(name: s
fabric:
  emulated: {nodes: 4}
phases:
  - name: baseline
    duration: 5s
  - name: hit
    duration: 12s
    faults:
      - kind: link_rate
        node: n1
        params: {interface: fab0, rate: 100mbit}
  - name: recovery
    duration: 5s
)";

using scenario_test::ErrorOf;
using scenario_test::Load;
using scenario_test::Replace;

std::vector<std::string> Ids(const PhaseSpec& p) {
  std::vector<std::string> out;
  for (const auto& f : p.faults) out.push_back(f.id + "/" + f.node);
  return out;
}

TEST(ScenarioSchema, HostlistNodeSelectsSeveralNodesOneFaultEach) {
  auto s = Load(Replace(Replace(kBase, "node: n1", "node: n[1-2]"),
                        "fabric:", "safety: {max_faulted_nodes: 2}\nfabric:"));
  EXPECT_EQ(Ids(s.phases[1]),
            (std::vector<std::string>{"hit-link_rate@n1/n1", "hit-link_rate@n2/n2"}));
  auto list = Load(Replace(Replace(kBase, "node: n1", "node: [n3, n1]"),
                           "fabric:", "safety: {max_faulted_nodes: 2}\nfabric:"));
  EXPECT_EQ(Ids(list.phases[1]),
            (std::vector<std::string>{"hit-link_rate@n1/n1", "hit-link_rate@n3/n3"}));
}

TEST(ScenarioSchema, BlastRadiusCountsExpandedNodes) {
  std::string e = ErrorOf(Replace(kBase, "node: n1", "node: n[1-3]"));
  EXPECT_EQ(e.rfind("drill.yaml:10:9: safety.max_faulted_nodes 1 (the default): at t=5s (phase "
                    "hit +0s) faults hit-link_rate@n1, hit-link_rate@n2 and hit-link_rate@n3 are "
                    "in force on nodes n1, n2 and n3 (3 nodes)",
                    0),
            0u)
      << e;
}

TEST(ScenarioSchema, TargetsWithRandomPickAndSelectorParams) {
  const std::string text =
      Replace(Replace(kBase, "        node: n1\n        params: {interface: fab0, rate: 100mbit}",
                      "        target: victims\n        params: {rate: 100mbit}"),
              "phases:",
              "targets:\n  victims: {nodes: \"n[1-3]\", random: {count: 1, seed: 7}, interface: "
              "fab0}\nphases:");
  auto s = Load(text);
  ASSERT_EQ(s.phases[1].faults.size(), 1u);
  const FaultSpec& f = s.phases[1].faults[0];
  EXPECT_EQ(f.params["interface"], "fab0");
  EXPECT_EQ(f.params["rate"], "100mbit");
  EXPECT_EQ(f.id, "hit-link_rate@" + f.node);
  // Seeded: the same file picks the same node every time.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Load(text).phases[1].faults[0].node, f.node);
  std::string missing = ErrorOf(Replace(text, "target: victims", "target: victim"));
  EXPECT_EQ(missing.rfind("drill.yaml:13:17: target \"victim\" is not defined in targets:; did you "
                          "mean \"victims\"?",
                          0),
            0u)
      << missing;
  std::string seedless = ErrorOf(Replace(text, ", seed: 7", ""));
  EXPECT_NE(seedless.find("drill.yaml:5:38: target victims.random needs a seed"), std::string::npos)
      << seedless;
  std::string both =
      ErrorOf(Replace(text, "params: {rate: 100mbit}", "params: {rate: 100mbit, interface: fab1}"));
  EXPECT_NE(both.find("param interface is set by both the target and the fault"), std::string::npos)
      << both;
  std::string unknown = ErrorOf(Replace(text, "\"n[1-3]\"", "\"n[1-4]\""));
  EXPECT_EQ(unknown.rfind("drill.yaml:5:20: target victims.nodes: node \"n4\" does not exist", 0),
            0u)
      << unknown;
  std::string bad_param = ErrorOf(Replace(text, "interface: fab0}", "interfaces: fab0}"));
  EXPECT_NE(bad_param.find("drill.yaml:14:17: fault hit-link_rate@n2: params.interface: required"),
            std::string::npos)
      << bad_param;
}

TEST(ScenarioSchema, HostsFileInventory) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("fdrill-hosts-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "cluster.hosts") << "# rack A\ngpu[01-04]\ngpu[05-06]  # rack B\n\n";
  const std::string text = Replace(Replace(kBase, "emulated: {nodes: 4}", "hosts: cluster.hosts"),
                                   "node: n1", "node: gpu05");
  auto s = ParseScenario(text, "drill.yaml", dir.string());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->Emulated());
  EXPECT_EQ(s->nodes, 6);
  EXPECT_EQ(s->NodeNames().front(), "gpu01");
  EXPECT_EQ(s->phases[1].faults[0].node, "gpu05");
  auto wrong = ParseScenario(Replace(text, "gpu05", "gpu07"), "drill.yaml", dir.string());
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(),
            "drill.yaml:11:15: node \"gpu07\" does not exist; this drill's fabric has gpu01, "
            "gpu02, gpu03, gpu04, gpu05, gpu06");
  std::ofstream(dir / "bad.hosts") << "gpu[01-04]\ngpu[3-1]\n";
  auto bad = ParseScenario(Replace(text, "cluster.hosts", "bad.hosts"), "drill.yaml", dir.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "drill.yaml:3:10: " + (dir / "bad.hosts").string() +
                                        ":2: gpu[3-1]: range 3-1 runs backwards (character 5)");
  auto none =
      ParseScenario(Replace(text, "cluster.hosts", "nope.hosts"), "drill.yaml", dir.string());
  EXPECT_NE(none.status().message().find("drill.yaml:3:10: cannot open the hosts file"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ScenarioSchema, FaultWindowsInsideAPhase) {
  auto s = Load(
      Replace(kBase, "        node: n1\n", "        node: n1\n        at: 2s\n        for: 3s\n"));
  const FaultSpec& f = s.phases[1].faults[0];
  EXPECT_EQ(f.at, std::chrono::seconds(2));
  EXPECT_EQ(f.length, std::chrono::seconds(3));
  EXPECT_EQ(f.max_duration, std::chrono::seconds(8));  // its window + the lease TTL
  std::string late = ErrorOf(
      Replace(kBase, "        node: n1\n", "        node: n1\n        at: 10s\n        for: 3s\n"));
  EXPECT_EQ(late,
            "drill.yaml:12:13: impossible timeline: the fault's window 10s + 3s does not fit in "
            "phase hit (12s)");
}

TEST(ScenarioSchema, OverlappingFaultsOnOneInterfaceAreRefused) {
  std::string e =
      ErrorOf(Replace(kBase, "        params: {interface: fab0, rate: 100mbit}\n",
                      "        params: {interface: fab0, rate: 100mbit}\n        for: 5s\n"
                      "      - {id: second, kind: link_rate, node: n1, at: 4s, params: {interface: "
                      "fab0, rate: 1gbit}}\n"));
  EXPECT_EQ(e,
            "drill.yaml:10:7: impossible timeline: faults hit-link_rate and second both hold "
            "link_rate on n1 fab0 at once in phase hit");
  // Back to back is fine.
  Load(Replace(kBase, "        params: {interface: fab0, rate: 100mbit}\n",
               "        params: {interface: fab0, rate: 100mbit}\n        for: 5s\n"
               "      - {id: second, kind: link_rate, node: n1, at: 5s, params: {interface: fab0, "
               "rate: 1gbit}}\n"));
}

TEST(ScenarioSchema, RampSplitsTheWindowIntoSteps) {
  auto s =
      Load(Replace(kBase, "params: {interface: fab0, rate: 100mbit}",
                   "params: {interface: fab0}\n        ramp: {rate: [400mbit, 100mbit, 25mbit]}"));
  const auto& fs = s.phases[1].faults;
  ASSERT_EQ(fs.size(), 3u);
  EXPECT_EQ(fs[0].id, "hit-link_rate@400mbit");
  EXPECT_EQ(fs[2].params["rate"], "25mbit");
  EXPECT_EQ(fs[1].at, std::chrono::seconds(4));
  EXPECT_EQ(fs[1].length, std::chrono::seconds(4));
  EXPECT_EQ(fs[2].at + fs[2].length, std::chrono::seconds(12));
  std::string unit =
      ErrorOf(Replace(kBase, "params: {interface: fab0, rate: 100mbit}",
                      "params: {interface: fab0}\n        ramp: {rate: [400mbit, 100mbps]}"));
  EXPECT_EQ(unit.rfind("drill.yaml:13:15: fault hit-link_rate@100mbps: params.rate", 0), 0u)
      << unit;
  std::string dense = ErrorOf(Replace(
      Replace(kBase, "duration: 12s", "duration: 1s"), "params: {interface: fab0, rate: 100mbit}",
      "params: {interface: fab0}\n        ramp: {rate: [400mbit, 100mbit, 25mbit]}"));
  EXPECT_NE(dense.find("impossible timeline: 3 ramp steps in 1s leave less than 500ms each"),
            std::string::npos)
      << dense;
}

constexpr char kRepeat[] = R"(name: soak
fabric:
  emulated: {nodes: 4}
phases:
  - name: baseline
    duration: 5s
  - name: cycle
    repeat: 3
    phases:
      - name: flap
        duration: 4s
        faults:
          - {kind: link_flap, node: n2, params: {interface: fab0, down: 1s}}
      - name: settle
        until: stable
        duration: 2s
        timeout: 30s
  - name: hold
    repeat: 2
    duration: 3s
  - name: recovery
    duration: 5s
)";

TEST(ScenarioSchema, RepeatsExpandGroupsAndPhases) {
  auto s = Load(kRepeat);
  std::vector<std::string> names;
  for (const auto& p : s.phases) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"baseline", "cycle#1.flap", "cycle#1.settle",
                                             "cycle#2.flap", "cycle#2.settle", "cycle#3.flap",
                                             "cycle#3.settle", "hold#1", "hold#2", "recovery"}));
  EXPECT_EQ(s.phases[3].faults[0].id, "cycle.flap-link_flap#2");
  ASSERT_TRUE(s.phases[2].gate.has_value());
  EXPECT_EQ(s.phases[2].gate->timeout, std::chrono::seconds(30));
  EXPECT_TRUE(s.phases[2].gate->abort_on_timeout);
  EXPECT_EQ(s.TotalDuration(), std::chrono::seconds(5 + 3 * (4 + 30) + 6 + 5));
}

TEST(ScenarioSchema, GateRules) {
  std::string no_timeout = ErrorOf(Replace(kRepeat, "        timeout: 30s\n", ""));
  EXPECT_EQ(no_timeout,
            "drill.yaml:14:9: phase cycle#1.settle waits until stable and needs timeout: the "
            "longest it may wait");
  std::string word = ErrorOf(Replace(kRepeat, "until: stable", "until: calm"));
  EXPECT_EQ(word, "drill.yaml:15:16: until must be stable (the job back in the baseline band)");
  std::string stray =
      ErrorOf(Replace(kRepeat, "    duration: 3s\n", "    duration: 3s\n    timeout: 9s\n"));
  EXPECT_EQ(stray, "drill.yaml:21:14: timeout belongs to a phase with until: stable");
  std::string nested = ErrorOf(Replace(
      kRepeat, "      - name: settle\n",
      "      - name: inner\n        phases: [{name: x, duration: 1s}]\n      - name: settle\n"));
  EXPECT_NE(nested.find("a group's phases cannot hold another group"), std::string::npos) << nested;
  std::string gated_fault =
      ErrorOf(Replace(kRepeat, "        timeout: 30s\n",
                      "        timeout: 30s\n        faults: [{kind: link_flap, node: n2, params: "
                      "{interface: fab0, down: 1s}}]\n"));
  EXPECT_NE(gated_fault.find("waits until stable) needs for: its length"), std::string::npos)
      << gated_fault;
  std::string first = ErrorOf(Replace(kRepeat, "    duration: 5s\n  - name: cycle",
                                      "    until: stable\n    timeout: 9s\n  - name: cycle"));
  EXPECT_NE(first.find("the first phase cannot wait until stable"), std::string::npos) << first;
  std::string repeat = ErrorOf(Replace(kRepeat, "repeat: 3", "repeat: 0"));
  EXPECT_EQ(repeat, "drill.yaml:8:13: repeat 0 is out of range: accepted 1..10000");
  std::string name = ErrorOf(Replace(kRepeat, "name: hold", "name: ho.ld"));
  EXPECT_NE(name.find("without #, . or @"), std::string::npos) << name;
}

TEST(ScenarioSchema, StopConditionsAndMetricExpectations) {
  auto s = Load(std::string(kBase) +
                "safety:\n  stop: {min_busbw: 0.05, for_iterations: 5, max_iteration_time: 8s, "
                "max_wrong_elements: 0, max_errors: 2}\n"
                "expect:\n  metrics:\n    - {metric: stall_ms, fault: hit-link_rate, max: 5000}\n"
                "    - {metric: baseline.busbw_median, min: 0.1}\n");
  EXPECT_EQ(s.stop.min_busbw_gbps, 0.05);
  EXPECT_EQ(s.stop.for_iterations, 5);
  EXPECT_EQ(s.stop.max_iteration_time, std::chrono::seconds(8));
  EXPECT_EQ(s.stop.max_wrong_elements, 0);
  ASSERT_EQ(s.expect.metrics.size(), 2u);
  EXPECT_EQ(s.expect.metrics[0].fault, "hit-link_rate");
  EXPECT_EQ(s.expect.metrics[1].min, 0.1);
  std::string typo = ErrorOf(std::string(kBase) + "safety:\n  stop: {min_busbww: 1}\n");
  EXPECT_EQ(typo.rfind("drill.yaml:16:10: unknown key \"min_busbww\" in safety.stop; did you mean "
                       "\"min_busbw\"?",
                       0),
            0u)
      << typo;
  std::string metric =
      ErrorOf(std::string(kBase) + "expect:\n  metrics: [{metric: stall, max: 1}]\n");
  EXPECT_EQ(metric.rfind("drill.yaml:16:22: unknown metric \"stall\"", 0), 0u) << metric;
  std::string fault =
      ErrorOf(std::string(kBase) +
              "expect:\n  metrics: [{metric: stall_ms, fault: hit-link_rat, max: 1}]\n");
  EXPECT_EQ(
      fault.rfind(
          "drill.yaml:16:39: no fault has id \"hit-link_rat\"; did you mean \"hit-link_rate\"?", 0),
      0u)
      << fault;
  std::string limit = ErrorOf(std::string(kBase) + "expect:\n  metrics: [{metric: stall_ms}]\n");
  EXPECT_NE(limit.find("needs max: or min:"), std::string::npos) << limit;
  std::string run_fault =
      ErrorOf(std::string(kBase) +
              "expect:\n  metrics: [{metric: residue.count, fault: hit-link_rate, max: 0}]\n");
  EXPECT_NE(run_fault.find("one number for the run; drop fault:"), std::string::npos) << run_fault;
}

TEST(ScenarioSchema, WorkloadOpsAndTypes) {
  auto s = Load(
      Replace(kBase, "fabric:", "workload: {op: all_gather, dtype: float64, size: 1M}\nfabric:"));
  EXPECT_EQ(s.workload.op, "all_gather");
  EXPECT_EQ(s.workload.dtype, "float64");
  std::string op = ErrorOf(Replace(kBase, "fabric:", "workload: {op: allreduce}\nfabric:"));
  EXPECT_NE(op.find("drill.yaml:2:16: workload.op \"allreduce\" is not one of"), std::string::npos)
      << op;
  EXPECT_NE(op.find("did you mean \"all_reduce\""), std::string::npos) << op;
  std::string redop =
      ErrorOf(Replace(kBase, "fabric:", "workload: {op: broadcast, redop: max}\nfabric:"));
  EXPECT_NE(redop.find("broadcast does not reduce; drop redop"), std::string::npos) << redop;
  std::string size =
      ErrorOf(Replace(kBase, "fabric:", "workload: {dtype: float64, size: 12}\nfabric:"));
  EXPECT_NE(size.find("multiple of 8 bytes (one float64)"), std::string::npos) << size;
}

// workload.transport: what the agents check a fault's reach against.
TEST(ScenarioSchema, WorkloadTransportIsTcpRdmaOrAutoWhichMeansRdmaForNccl) {
  EXPECT_FALSE(Load(kBase).workload.Rdma());  // fdrill-collective over Open MPI: tcp
  EXPECT_TRUE(
      Load(Replace(kBase, "fabric:", "workload: {backend: nccl}\nfabric:")).workload.Rdma());
  EXPECT_FALSE(Load(Replace(kBase, "fabric:", "workload: {backend: nccl, transport: tcp}\nfabric:"))
                   .workload.Rdma());
  EXPECT_TRUE(
      Load(Replace(kBase, "fabric:", "workload: {transport: rdma}\nfabric:")).workload.Rdma());
  std::string bad = ErrorOf(Replace(kBase, "fabric:", "workload: {transport: verbs}\nfabric:"));
  EXPECT_NE(bad.find("drill.yaml:2:23: workload.transport \"verbs\" is not one of"),
            std::string::npos)
      << bad;
}

// The loader's lists of ops, dtypes and redops are fdrill-collective's.
TEST(ScenarioSchema, WorkloadWordsAreTheCollectivesOwn) {
  for (const auto& list : {AcceptedOps(), AcceptedDTypes(), AcceptedRedOps()}) {
    size_t start = 0;
    while (start < list.size()) {
      size_t comma = list.find(", ", start);
      std::string word =
          list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      std::string key = list == AcceptedOps() ? "op" : list == AcceptedDTypes() ? "dtype" : "redop";
      std::string text = Replace(
          kBase, "fabric:",
          "workload: {" + key + ": " + word + (key == "dtype" ? ", size: 1M" : "") + "}\nfabric:");
      EXPECT_TRUE(ParseScenario(text, "drill.yaml").ok()) << key << " " << word;
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
  }
}

}  // namespace
}  // namespace fdrill

namespace fdrill {
namespace {

// Issue 55: fdrill-collective --lineup, from the scenario; a mode that has
// no line-up to drop refuses it.
TEST(ScenarioSchema, LineUpIsABarrierOrNone) {
  EXPECT_EQ(Load(kBase).workload.lineup, "barrier");
  EXPECT_EQ(Load(Replace(kBase, "fabric:", "workload: {lineup: none}\nfabric:")).workload.lineup,
            "none");
  std::string off = ErrorOf(Replace(kBase, "fabric:", "workload: {lineup: off}\nfabric:"));
  EXPECT_NE(off.find("drill.yaml:2:20: "), std::string::npos) << off;
  EXPECT_NE(off.find("barrier"), std::string::npos) << off;
  EXPECT_NE(off.find("none"), std::string::npos) << off;
  std::string train = ErrorOf(Replace(
      kBase,
      "fabric:", "workload: {mode: train, steps: 10, checkpoint_every: 5, lineup: none}\nfabric:"));
  EXPECT_NE(train.find("workload.lineup is fixed in mode: train"), std::string::npos) << train;
}

TEST(ScenarioSchema, TrainModeAndRestartPolicy) {
  auto s =
      Load(Replace(kBase, "fabric:",
                   "workload:\n  mode: train\n  steps: 5000\n  checkpoint_every: 20\n  size: 256K\n"
                   "  restart: {max_restarts: 2, backoff: 500ms, hang_timeout: 5s}\nfabric:"));
  EXPECT_TRUE(s.workload.Train());
  EXPECT_EQ(s.workload.steps, 5000);
  EXPECT_EQ(s.workload.checkpoint_every, 20);
  EXPECT_EQ(s.workload.dtype, "float64");
  EXPECT_EQ(s.workload.restart.max_restarts, 2);
  EXPECT_EQ(s.workload.restart.backoff, std::chrono::milliseconds(500));
  EXPECT_EQ(s.workload.restart.hang_timeout, std::chrono::seconds(5));
  std::string sweep =
      ErrorOf(Replace(kBase, "fabric:", "workload: {restart: {max_restarts: 1}}\nfabric:"));
  EXPECT_NE(sweep.find("drill.yaml:2:21: workload.restart needs mode: train"), std::string::npos)
      << sweep;
  std::string steps = ErrorOf(Replace(kBase, "fabric:", "workload: {mode: train}\nfabric:"));
  EXPECT_NE(steps.find("mode: train needs steps: N and checkpoint_every: K"), std::string::npos)
      << steps;
  std::string op = ErrorOf(
      Replace(kBase, "fabric:",
              "workload: {mode: train, steps: 10, checkpoint_every: 5, op: all_gather}\nfabric:"));
  EXPECT_NE(op.find("workload.op is fixed in mode: train"), std::string::npos) << op;
  std::string every = ErrorOf(Replace(
      kBase, "fabric:", "workload: {mode: train, steps: 10, checkpoint_every: 50}\nfabric:"));
  EXPECT_NE(every.find("workload.checkpoint_every 50 is out of range: accepted 1..10"),
            std::string::npos)
      << every;
  std::string key = ErrorOf(Replace(kBase, "fabric:",
                                    "workload: {mode: train, steps: 10, checkpoint_every: 5, "
                                    "restart: {max_restart: 1}}\nfabric:"));
  EXPECT_NE(key.find("did you mean \"max_restarts\""), std::string::npos) << key;
}

// scenario_fuzz territory: sums of durations must never overflow.
TEST(ScenarioSchema, DurationsAndDrillLengthAreBounded) {
  std::string one = ErrorOf(Replace(kBase, "duration: 12s", "duration: 200h"));
  EXPECT_EQ(one, "drill.yaml:8:15: duration \"200h\" is out of range: accepted 1ms..168h");
  std::string total = ErrorOf(Replace(Replace(kBase, "duration: 12s", "duration: 100h"),
                                      "  - name: hit\n", "  - name: hit\n    repeat: 10000\n"));
  EXPECT_NE(total.find("the drill would last more than 30 days (repeats included)"),
            std::string::npos)
      << total;
  std::string at =
      ErrorOf(Replace(kBase, "        node: n1\n", "        node: n1\n        at: 1e30s\n"));
  EXPECT_NE(at.find("at most 168h"), std::string::npos) << at;
}

TEST(ScenarioSchema, SeededRandomStartTime) {
  const std::string text =
      Replace(kBase, "        node: n1\n",
              "        node: n1\n        at: {between: [1s, 5s], seed: 9}\n        for: 2s\n");
  auto s = Load(text);
  const Duration at = s.phases[1].faults[0].at;
  EXPECT_GE(at, std::chrono::seconds(1));
  EXPECT_LT(at, std::chrono::seconds(5));
  EXPECT_EQ(Load(text).phases[1].faults[0].at, at);  // the seed fixes it
  std::string bad = ErrorOf(Replace(text, "[1s, 5s]", "[5s, 1s]"));
  EXPECT_NE(bad.find("at.between must be two durations, the first smaller"), std::string::npos)
      << bad;
}

}  // namespace
}  // namespace fdrill

namespace fdrill {
namespace {

TEST(ScenarioSchema, ExpectJobTakesOneOfThreeOutcomesAndAsPredictedNeedsAnRdmaJob) {
  EXPECT_EQ(Load(std::string(kBase) + "expect: {job: error_not_hang}\n").expect.job,
            "error_not_hang");
  EXPECT_EQ(Load(std::string(kBase) + "expect: {job: rides_through}\n").expect.job,
            "rides_through");
  const std::string typo = ErrorOf(std::string(kBase) + "expect: {job: error_not_hung}\n");
  EXPECT_EQ(typo.rfind("drill.yaml:15:15: expect.job: unknown \"error_not_hung\"; did you mean "
                       "\"error_not_hang\"?",
                       0),
            0u)
      << typo;
  const std::string tcp = ErrorOf(std::string(kBase) + "expect: {job: as_predicted}\n");
  EXPECT_NE(tcp.find("this workload's transport is tcp"), std::string::npos) << tcp;
  EXPECT_EQ(Load(std::string(kBase) + "workload: {transport: rdma}\nexpect: {job: as_predicted}\n")
                .expect.job,
            "as_predicted");
}

}  // namespace
}  // namespace fdrill

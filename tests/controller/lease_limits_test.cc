// LeaseLimitsFor: what a drill's lease lets each agent do — the kinds,
// targets and count of the faults the scenario puts on that node or
// switch, and the longest max_duration among them; nothing for a node no
// fault names. Pure: the injectors parse params, nothing is touched.
#include "harness/controller/lease_limits.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

namespace fdrill {
namespace {

Scenario Load(const std::string& yaml) {
  auto s = ParseScenario(yaml, "drill.yaml");
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

constexpr char kThreeFaults[] = R"(name: t
fabric: {emulated: {nodes: 3}}
workload: {size: 4K}
phases:
  - {name: baseline, duration: 1s}
  - name: slow
    duration: 2s
    faults:
      - {id: cap0, kind: link_rate, node: n1, params: {interface: fab0, rate: 100mbit}}
  - {name: between, duration: 1s}
  - name: lossy
    duration: 4s
    faults:
      - {id: loss, kind: link_loss, node: n1, params: {interface: fab0, percent: 5}}
      - {id: cap2, kind: link_rate, node: n2, params: {interface: fab0, rate: 10mbit}}
  - {name: recovery, duration: 1s}
safety: {max_faulted_nodes: 2}
)";

// Two faults on n1 of two kinds on one interface: both kinds, the one
// target, two faults at once at most, the longer of their max_durations.
TEST(LeaseLimits, ANodesFaultsGiveItsKindsTargetsCountAndLongestDuration) {
  const Scenario s = Load(kThreeFaults);
  ASSERT_EQ(s.phases.size(), 5u);
  const Json n1 = LeaseLimitsFor(s, "n1");
  EXPECT_EQ(n1["kinds"], Json::array({"link_loss", "link_rate"}));
  EXPECT_EQ(n1["targets"], Json::array({"fab0"}));
  EXPECT_EQ(n1["max_faults"], 2);
  const auto longest =
      std::max(s.phases[1].faults[0].max_duration, s.phases[3].faults[0].max_duration);
  EXPECT_EQ(n1["max_duration_ms"],
            std::chrono::duration_cast<std::chrono::milliseconds>(longest).count());
  // The lossy phase's fault is on longer: its max_duration is the longer.
  EXPECT_GT(s.phases[3].faults[0].max_duration, s.phases[1].faults[0].max_duration);
}

// Each node's limits are its own: n2's one fault, not n1's.
TEST(LeaseLimits, EachNodeGetsOnlyItsOwnFaults) {
  const Json n2 = LeaseLimitsFor(Load(kThreeFaults), "n2");
  EXPECT_EQ(n2["kinds"], Json::array({"link_rate"}));
  EXPECT_EQ(n2["max_faults"], 1);
}

// A node no fault names may hold nothing: no kinds, no targets, no count,
// no duration.
TEST(LeaseLimits, ANodeWithoutFaultsMayDoNothing) {
  const Json n0 = LeaseLimitsFor(Load(kThreeFaults), "n0");
  EXPECT_TRUE(n0["kinds"].empty());
  EXPECT_TRUE(n0["targets"].empty());
  EXPECT_EQ(n0["max_faults"], 0);
  EXPECT_FALSE(n0.contains("max_duration_ms"));
}

}  // namespace
}  // namespace fdrill

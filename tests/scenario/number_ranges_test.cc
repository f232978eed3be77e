// Issue 21: every number a scenario gives is checked against a stated range,
// refused with the range and the line that gives it, never overflowed
// (99999999tbit once became "tbf rate 9223372036854775808bit").
#include <gtest/gtest.h>

#include "harness/scenario/scenario.h"
#include "tests/scenario/scenario_text.h"

namespace fdrill {
namespace {

using scenario_test::ErrorOf;
using scenario_test::Load;
using scenario_test::Replace;

constexpr char kRangesDrill[] = R"(name: t
fabric:
  emulated: {nodes: 4}
workload: {size: 1M}
phases:
  - name: baseline
    duration: 5s
  - name: hit
    duration: 20s
    faults:
      - kind: link_rate
        node: n1
        params:
          interface: fab0
          rate: 100mbit
      - kind: link_loss
        node: n2
        params:
          interface: fab0
          percent: 5
      - kind: link_flap
        node: n3
        params:
          interface: fab0
          down: 1s
          count: 2
  - name: recovery
    duration: 5s
safety: {max_faulted_nodes: 3}
)";

TEST(NumberRanges, TheDrillLoadsWithEveryNumberInRange) {
  EXPECT_EQ(Load(kRangesDrill).phases.size(), 3u);
}

TEST(NumberRanges, ARateBeyondAnyLinkIsRefusedAtItsLineNotOverflowed) {
  EXPECT_EQ(ErrorOf(Replace(kRangesDrill, "rate: 100mbit", "rate: 99999999tbit")),
            "drill.yaml:15:17: fault hit-link_rate: params.rate: rate \"99999999tbit\" is out of "
            "range: accepted 8kbit..10tbit");
}

TEST(NumberRanges, ARateTbfCannotShapeIsRefusedWithTheRange) {
  EXPECT_EQ(ErrorOf(Replace(kRangesDrill, "rate: 100mbit", "rate: 1kbit")),
            "drill.yaml:15:17: fault hit-link_rate: params.rate: rate \"1kbit\" is out of range: "
            "accepted 8kbit..10tbit");
}

TEST(NumberRanges, AnEmulatedPortRateBeyondAnyLinkIsRefused) {
  EXPECT_EQ(ErrorOf(Replace(kRangesDrill, "{nodes: 4}", "{nodes: 4, port_rate: 20tbit}")),
            "drill.yaml:3:35: fabric.emulated.port_rate: rate \"20tbit\" is out of range: "
            "accepted 8kbit..10tbit");
}

TEST(NumberRanges, APhaseDurationPastAWeekIsRefusedWithTheRange) {
  EXPECT_EQ(ErrorOf(Replace(kRangesDrill, "duration: 5s", "duration: 99999999999999h")),
            "drill.yaml:7:15: duration \"99999999999999h\" is out of range: accepted 1ms..168h");
}

TEST(NumberRanges, AFaultParamDurationPastAWeekIsRefusedAtItsLine) {
  EXPECT_EQ(ErrorOf(Replace(kRangesDrill, "down: 1s", "down: 9999999999999999s")),
            "drill.yaml:25:17: fault hit-link_flap2: params.down: duration \"9999999999999999s\" "
            "is out of range: accepted 1us..168h");
}

TEST(NumberRanges, AZeroFaultParamDurationIsRefusedWithTheRange) {
  EXPECT_EQ(ErrorOf(Replace(kRangesDrill, "down: 1s", "down: 0s")),
            "drill.yaml:25:17: fault hit-link_flap2: params.down: duration \"0s\" is out of range: "
            "accepted 1us..168h");
}

TEST(NumberRanges, ACountPastItsRangeIsRefusedAtItsLine) {
  EXPECT_EQ(ErrorOf(Replace(kRangesDrill, "count: 2", "count: 5000")),
            "drill.yaml:26:18: fault hit-link_flap2: params.count: 5000 is out of range: accepted "
            "1..1000");
}

TEST(NumberRanges, ACountBeyondInt64IsOutOfRangeNotNotAnInteger) {
  EXPECT_EQ(ErrorOf(Replace(kRangesDrill, "count: 2", "count: 99999999999999999999")),
            "drill.yaml:26:18: fault hit-link_flap2: params.count: 99999999999999999999 is out of "
            "range: accepted 1..1000");
  EXPECT_EQ(ErrorOf(Replace(kRangesDrill, "{nodes: 4}", "{nodes: 99999999999999999999}")),
            "drill.yaml:3:21: fabric.emulated.nodes 99999999999999999999 is out of range: "
            "accepted 2..200");
}

TEST(NumberRanges, APercentageAbove100IsRefusedAtItsLine) {
  EXPECT_EQ(ErrorOf(Replace(kRangesDrill, "percent: 5", "percent: 150")),
            "drill.yaml:20:20: fault hit-link_loss1: params.percent: percentage 150 is out of "
            "range: accepted 0.000001..100");
}

TEST(NumberRanges, ANegativeOrHugePercentageIsOutOfRange) {
  EXPECT_NE(ErrorOf(Replace(kRangesDrill, "percent: 5", "percent: -5"))
                .find("params.percent: percentage -5 is out of range: accepted 0.000001..100"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Replace(kRangesDrill, "percent: 5", "percent: \"99999999999999999999%\""))
                .find("params.percent: percentage 99999999999999999999 is out of range"),
            std::string::npos);
}

TEST(NumberRanges, AWorkloadSizeBeyond32GiBIsRefusedWithTheRange) {
  EXPECT_EQ(ErrorOf(Replace(kRangesDrill, "{size: 1M}", "{size: 99999999999G}")),
            "drill.yaml:4:18: workload.size: size \"99999999999G\" is out of range: accepted "
            "1B..32GiB");
}

TEST(NumberRanges, ATbfBurstOutsideWhatTcTakesIsRefusedAtItsLine) {
  EXPECT_EQ(ErrorOf(Replace(kRangesDrill, "rate: 100mbit", "rate: 100mbit\n          burst: 64G")),
            "drill.yaml:16:18: fault hit-link_rate: params.burst: size \"64G\" is out of range: "
            "accepted 2KiB..2GiB");
}

}  // namespace
}  // namespace fdrill

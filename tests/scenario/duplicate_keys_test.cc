// Issue 21: a key a mapping names twice is refused with both places,
// wherever it is in the file, never resolved silently to one of them.
#include <gtest/gtest.h>

#include "harness/scenario/scenario.h"
#include "harness/scenario/topology.h"
#include "tests/scenario/scenario_text.h"

namespace fdrill {
namespace {

using scenario_test::ErrorOf;
using scenario_test::Replace;

constexpr char kDuplicatesDrill[] = R"(name: t
fabric:
  emulated: {nodes: 4}
workload: {size: 1M}
phases:
  - name: baseline
    duration: 5s
  - name: hit
    duration: 2s
    faults:
      - kind: link_rate
        node: n1
        params:
          interface: fab0
          rate: 100mbit
  - name: recovery
    duration: 5s
)";

TEST(DuplicateKeys, ATopLevelKeyGivenTwiceIsRefusedWithBothLines) {
  EXPECT_EQ(ErrorOf(std::string(kDuplicatesDrill) + "name: u\n"),
            "drill.yaml:18:1: duplicate key \"name\" (first at line 1)");
}

TEST(DuplicateKeys, APhaseKeyGivenTwiceIsRefusedWithBothLines) {
  EXPECT_EQ(ErrorOf(Replace(kDuplicatesDrill, "    duration: 2s\n",
                            "    duration: 2s\n    duration: 20s\n")),
            "drill.yaml:10:5: duplicate key \"duration\" (first at line 9)");
}

TEST(DuplicateKeys, AParamGivenTwiceDeepInAFaultIsRefusedWithBothLines) {
  EXPECT_EQ(ErrorOf(Replace(kDuplicatesDrill, "          rate: 100mbit\n",
                            "          rate: 100mbit\n          rate: 1mbit\n")),
            "drill.yaml:16:11: duplicate key \"rate\" (first at line 15)");
}

TEST(DuplicateKeys, AKeyRepeatedInAFlowMappingIsRefused) {
  EXPECT_EQ(ErrorOf(Replace(kDuplicatesDrill, "{nodes: 4}", "{nodes: 4, nodes: 8}")),
            "drill.yaml:3:24: duplicate key \"nodes\" (first at line 3)");
}

TEST(DuplicateKeys, QuotingAKeyDoesNotMakeItAnotherKey) {
  EXPECT_EQ(ErrorOf(Replace(kDuplicatesDrill, "workload: {size: 1M}",
                            "workload: {size: 1M, \"size\": 2M}")),
            "drill.yaml:4:22: duplicate key \"size\" (first at line 4)");
}

TEST(DuplicateKeys, TheSameKeyInSiblingMappingsIsNotADuplicate) {
  // duration and name appear in every phase: each phase is its own mapping.
  auto s = ParseScenario(kDuplicatesDrill, "drill.yaml");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
}

TEST(DuplicateKeys, AKeyGivenTwiceInATopologyFileIsRefusedWithBothLines) {
  auto t = ParseTopology(R"(rails:
  - name: rail0
    name: rail1
)",
                         "topo.yaml");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "topo.yaml:3:5: duplicate key \"name\" (first at line 2)");
}

}  // namespace
}  // namespace fdrill

#include "harness/controller/timeline.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

using std::chrono::seconds;

Scenario ThreePhases() {
  Scenario s;
  s.nodes = 2;
  s.phases = {{"baseline", seconds(10), {}},
              {"hit", seconds(5), {{"a", "link_rate", "n0", Json::object(), 0}, {"b", "link_flap", "n0", Json::object(), 0}}},
              {"recovery", seconds(10), {}}};
  return s;
}

TEST(Timeline, StepsAtPhaseBoundariesInSafeOrder) {
  auto steps = BuildTimeline(ThreePhases());
  std::vector<std::pair<int64_t, std::string>> got;
  for (const auto& st : steps) {
    got.emplace_back(std::chrono::duration_cast<seconds>(st.at).count(),
                     std::string(StepKindName(st.kind)) + (st.fault >= 0 ? std::to_string(st.fault) : ""));
  }
  std::vector<std::pair<int64_t, std::string>> want = {
      {0, "phase_start"}, {10, "phase_end"}, {10, "phase_start"}, {10, "apply0"}, {10, "apply1"},
      {15, "revert0"},    {15, "revert1"},   {15, "phase_end"},   {15, "phase_start"}, {25, "phase_end"}};
  EXPECT_EQ(got, want);
}

TEST(Timeline, EveryApplyHasALaterOrEqualRevert) {
  auto steps = BuildTimeline(ThreePhases());
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind != Step::kApply) continue;
    bool reverted = false;
    for (size_t j = i + 1; j < steps.size(); ++j) {
      reverted |= steps[j].kind == Step::kRevert && steps[j].phase == steps[i].phase && steps[j].fault == steps[i].fault;
    }
    EXPECT_TRUE(reverted) << "fault " << steps[i].fault;
  }
}

}  // namespace
}  // namespace fdrill

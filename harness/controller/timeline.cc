#include "harness/controller/timeline.h"

#include <algorithm>

namespace fdrill {

std::vector<Step> BuildTimeline(const Scenario& s) {
  std::vector<Step> steps;
  Duration t{};
  for (int p = 0; p < static_cast<int>(s.phases.size()); ++p) {
    const PhaseSpec& phase = s.phases[p];
    steps.push_back({t, Step::kPhaseStart, p, -1});
    for (int f = 0; f < static_cast<int>(phase.faults.size()); ++f) steps.push_back({t, Step::kApply, p, f});
    t += phase.duration;
    for (int f = 0; f < static_cast<int>(phase.faults.size()); ++f) steps.push_back({t, Step::kRevert, p, f});
    steps.push_back({t, Step::kPhaseEnd, p, -1});
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
    if (a.at != b.at) return a.at < b.at;
    return a.kind < b.kind;
  });
  return steps;
}

const char* StepKindName(Step::Kind kind) {
  switch (kind) {
    case Step::kPhaseEnd: return "phase_end";
    case Step::kRevert: return "revert";
    case Step::kPhaseStart: return "phase_start";
    case Step::kApply: return "apply";
  }
  return "?";
}

}  // namespace fdrill

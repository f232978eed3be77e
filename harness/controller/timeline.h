// Timeline: a scenario's phases as a list of timed steps, relative to the
// start of the first phase. Pure: no clocks, no I/O. A fault is applied at
// the start of its phase and reverted at its end; steps at the same instant
// keep the order revert, phase_end, phase_start, apply: a phase ends once
// its faults are reverted.
#pragma once

#include <vector>

#include "harness/scenario/scenario.h"

namespace fdrill {

struct Step {
  enum Kind { kRevert, kPhaseEnd, kPhaseStart, kApply };
  Duration at{};
  Kind kind = kPhaseStart;
  int phase = 0;
  int fault = -1;  // index in the phase's faults for kApply / kRevert
};

std::vector<Step> BuildTimeline(const Scenario& scenario);
const char* StepKindName(Step::Kind kind);

}  // namespace fdrill

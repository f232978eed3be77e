// DrillContext: what a drill's components share — the scenario, the
// options, the clock, the state its threads share, its agents, its event
// log and where its agents are (DrillTargets) — made once by the drill (drill.cc) and handed by
// reference to the timeline walker and each workload supervisor, in place of a reference each.
// Every member outlives the components that hold the context.
#pragma once

#include "common/core/clock.h"
#include "harness/controller/agent_calls.h"
#include "harness/controller/drill_events.h"
#include "harness/controller/drill_state.h"
#include "harness/controller/drill_targets.h"
#include "harness/scenario/scenario.h"

namespace fdrill {

struct DrillOptions;

struct DrillContext {
  const Scenario& s;
  const DrillOptions& opt;
  const Clock& clock;
  DrillState& state;
  AgentCalls& agents;
  DrillEvents& events;
  const DrillTargets& targets;
};

}  // namespace fdrill

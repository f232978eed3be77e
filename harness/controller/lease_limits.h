// The limits a drill's lease carries to each agent (agents/lease.h): what
// the scenario lets that node's agent do, computed here and enforced there,
// so an agent refuses what this drill never declared even if the controller
// (or someone holding its certificate) asks.
//
// For the node (or switch) NAME: the kinds of the faults the scenario puts
// on it; their targets as the injectors name them from the params
// (Fault::Target(), built without touching anything); as many faults at
// once as the scenario has on it; and the longest max_duration among them.
// A node no fault names gets empty lists and max_faults 0: nothing. A
// fault whose target cannot be named without the node (the injector needs
// the machine to build it) leaves the targets unlimited for that node; the
// kinds and counts still hold.
#pragma once

#include <string>

#include "common/core/json.h"
#include "harness/scenario/scenario.h"

namespace fdrill {

Json LeaseLimitsFor(const Scenario& scenario, const std::string& name);

}  // namespace fdrill

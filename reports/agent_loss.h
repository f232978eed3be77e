// Agents a drill lost and what they left applied: from events.jsonl's
// agent_lost (faults_left), agent_reconnected and faults_swept (what the
// restarted agent's start-up journal sweep reverted, and when), with each
// fault's kind and target from its fault_applied (docs/reference/formats.md). And the
// one sentence per fault report.md and report.html print. Pure.
#pragma once

#include <string>
#include <vector>

#include "reports/run_data.h"
#include "reports/summary.h"

namespace fdrill {

// One AgentLoss per agent_lost event, in order. A faults_swept after it on
// the same node marks its ids swept (an id the loss did not list is added:
// it was left too); an agent_reconnected after it sets back_at_s.
std::vector<AgentLoss> AnalyzeAgentLosses(const std::vector<Event>& events);

// "n1: fault cap (link_rate fab0) left applied while the agent was down
// 14:02:03.1–14:02:05.9, reverted by the restarted agent's journal sweep";
// or, with no sweep listing it, where it stands ("... was in force when the
// agent was lost at 14:02:03.1; the drill did not reach the agent again (...)
// — the residue check says what is left"). Times are UTC, from the events'
// wall_ns; t= seconds since the drill's start where those are absent.
std::string LeftFaultText(const AgentLoss& loss, const LeftFault& fault);

// "n1: the agent was lost at 14:02:03.1 (why) with no fault in force" and
// ", back at ..." — for a loss that left nothing.
std::string AgentLossText(const AgentLoss& loss);

}  // namespace fdrill

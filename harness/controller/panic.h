// Panic: every agent of a fabric reverts everything it holds now, stops its
// workload and drops its lease. Needs no scenario and no run: it is what an
// operator types when a drill went wrong. Idempotent: an agent with nothing
// applied answers {reverted: true}. Agents are asked in parallel; one that
// does not answer is reported, the others still revert.
#pragma once

#include <string>
#include <vector>

#include "harness/controller/agent_set.h"
#include "harness/core/result.h"
#include "harness/core/units.h"

namespace fdrill {

struct PanicOutcome {
  std::string node;
  Status status;  // ok: everything reverted, workload stopped
};

// tls: nullptr for agents started with --insecure.
std::vector<PanicOutcome> PanicAll(const std::vector<AgentAddress>& agents, const TlsConfig* tls,
                                   Duration timeout);

}  // namespace fdrill

// Panic: every agent of a fabric latches (agents/panic_latch.h: no lease,
// apply or workload start is taken until cleared, across agent restarts),
// stops its workload, reverts everything it holds now and drops its lease —
// one revert_all with "latch". Needs no scenario and no run: it is what an
// operator types when a drill went wrong. Idempotent: an agent with nothing
// applied answers {reverted: true}. Agents are asked in parallel; one that
// does not answer is reported, the others still revert. PanicClearAll
// lifts the latch (`fdrill panic --clear`).
#pragma once

#include <string>
#include <vector>

#include "common/core/result.h"
#include "common/core/units.h"
#include "harness/controller/agent_set.h"

namespace fdrill {

struct PanicOutcome {
  std::string node;
  Status status;  // ok: everything reverted, workload stopped
  // Set when the agent reverted but could not write its latch (a full or
  // read-only state directory): latched in memory only, until it restarts.
  std::string latch_error;
};

// tls: nullptr for agents started with --insecure.
// `reason` is recorded in every agent's latch ("fdrill panic by root@ctl").
std::vector<PanicOutcome> PanicAll(const std::vector<AgentAddress>& agents, const TlsConfig* tls,
                                   Duration timeout, const std::string& reason);
std::vector<PanicOutcome> PanicClearAll(const std::vector<AgentAddress>& agents,
                                        const TlsConfig* tls, Duration timeout);

}  // namespace fdrill

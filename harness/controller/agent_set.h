// AgentSet: the agents a command talks to outside a drill (`fdrill
// inventory`, `fdrill panic`): the emulated fabric's, a hosts file's, or a
// Slurm allocation's, each a node name and where its agent listens.
// ForEachAgent connects to every agent and runs one job per link, up to
// kParallel at a time, so a thousand-node cluster answers in a few rounds of
// the slowest agent rather than a thousand; one agent that does not answer
// is its own error, the rest still run. DrillTargetsOfFabric and
// DrillTargetsOfHosts resolve a drill's agents the same two ways, once,
// before it runs (drill_targets.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/core/result.h"
#include "common/core/units.h"
#include "common/tls/tls_config.h"
#include "harness/controller/agent_link.h"
#include "harness/controller/drill_targets.h"

namespace fdrill {

struct FabricState;  // fabric/fabric_state.h

struct AgentAddress {
  std::string node;  // the name the agent answers to (and its certificate names)
  std::string host;  // where to dial it
  uint16_t port = 7100;
};

// The emulated fabric's node agents; with_switches: its switches' agents
// after them (`fdrill panic` reaches every agent that can hold a fault).
std::vector<AgentAddress> AgentsOfFabric(const FabricState& fabric, bool with_switches = false);
// Real nodes: dialled by their own names, at `port`.
std::vector<AgentAddress> AgentsOfHosts(const std::vector<std::string>& hosts, uint16_t port);

// A drill's targets on the emulated fabric: every node (agent on its
// management address, its TMPDIR, its rail-0 address), every switch (its
// agent, when it runs one), the rails' subnets, the shape, its pki and its
// cabling.
DrillTargets DrillTargetsOfFabric(const FabricState& fabric);
// ... on real nodes: each dialled by its own name at `port`, TMPDIR /tmp;
// nothing else is known before the agents answer.
DrillTargets DrillTargetsOfHosts(const std::vector<std::string>& hosts, uint16_t port);

// The agents of --hosts FILE, or --slurm (SLURM_JOB_NODELIST), or else the
// emulated fabric at fabric_dir (then *fabric_pki gets its pki dir). Errors
// name the flag and what would be right.
Result<std::vector<AgentAddress>> ResolveAgents(const std::string& hosts_file, bool slurm,
                                                uint16_t port, const std::string& fabric_dir,
                                                std::string* fabric_pki,
                                                bool with_switches = false);

// {"nodes": [<each agent's inventory reply, without the wire envelope, with
// "node">, or {"node", "error"} where it did not answer]} — what `fdrill
// inventory --json` prints and a run's inventory.json holds.
Json ClusterInventory(const std::vector<std::string>& nodes,
                      const std::vector<Result<Json>>& replies);

inline constexpr int kParallel = 64;

// job runs on a worker thread with a connected link; results in input order.
std::vector<Result<Json>> ForEachAgent(const std::vector<AgentAddress>& agents,
                                       const TlsConfig* tls, Duration timeout,
                                       const std::function<Result<Json>(AgentLink&)>& job);

}  // namespace fdrill

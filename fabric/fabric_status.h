// `fdrill fabric status`: what fabric.json says, checked against the machine
// (is each agent alive, is each link up). Read-only.
#pragma once

#include <string>
#include <vector>

#include "fabric/fabric_state.h"
#include "fabric/node_system.h"

namespace fdrill {

struct NodeStatus {
  FabricNode node;
  bool agent_alive = false;
  // Operational state as `ip link` reports it ("UP", "DOWN", "LOWERLAYERDOWN",
  // ...); "missing" when the link does not exist.
  std::string fabric_link;  // fab0 in the node
  std::string switch_port;  // swp<i> in the switch namespace
  std::string mgmt_link;    // mgmt0 in the node
};

struct FabricStatus {
  FabricState state;
  std::vector<NodeStatus> nodes;  // in state.nodes order
};

// Parses `ip -o link show` into (name, state) pairs; state is the word after
// "state", e.g. {"fab0", "UP"}.
std::vector<std::pair<std::string, std::string>> ParseLinkStates(const std::string& out);

// NotFound "no fabric" when fabric.json does not exist.
Result<FabricStatus> GetFabricStatus(const std::string& state_dir, const FabricHost& host);

std::string RenderStatusTable(const FabricStatus& status);
std::string RenderStatusJson(const FabricStatus& status);

}  // namespace fdrill

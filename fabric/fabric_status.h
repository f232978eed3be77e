// `fdrill fabric status`: what fabric.json says, checked against the machine
// (is each agent and sshd alive, how often its supervisor restarted it, is the
// supervisor alive, is each link up). Read-only.
#pragma once

#include <string>
#include <vector>

#include "fabric/fabric_state.h"
#include "fabric/node_system.h"

namespace fdrill {

struct NodeStatus {
  FabricNode node;
  bool agent_alive = false;
  bool sshd_alive = false;    // node.sshd_pid is alive and is this fabric's sshd
  bool slurmd_alive = false;  // node.slurmd_pid likewise (`up --slurm`)
  // Operational state as `ip link` reports it ("UP", "DOWN", "LOWERLAYERDOWN",
  // ...); "missing" when the link does not exist.
  std::vector<std::string> fabric_links;  // per node.fabric entry: fab<r> in the node
  std::vector<std::string> switch_ports;  // per node.fabric entry: swp<i> on its leaf
  std::string mgmt_link;                  // mgmt0 in the node
};

// The uplinks' states (up0 on a leaf, dn<l> on a spine), by "switch:port".
struct UplinkStatus {
  std::string port;   // "rail0-leaf1:up0"
  std::string peer;   // "rail0-spine:dn1"
  std::string state;  // as NodeStatus's
};

struct FabricStatus {
  FabricState state;
  std::vector<NodeStatus> nodes;  // in state.nodes order
  std::vector<UplinkStatus> uplinks;
  // The switches' agents: node is the switch's agent side, fabric_links and
  // switch_ports empty.
  std::vector<NodeStatus> switch_agents;
  // state.supervisor_pid is alive and is this fabric's supervisor.
  bool supervisor_alive = false;
  // `up --slurm`: state.munged_pid / slurmctld_pid alive and the fabric's.
  bool munged_alive = false;
  bool slurmctld_alive = false;
};

// Parses `ip -o link show` into (name, state) pairs; state is the word after
// "state", e.g. {"fab0", "UP"}.
std::vector<std::pair<std::string, std::string>> ParseLinkStates(const std::string& out);

// NotFound "no fabric" when fabric.json does not exist.
Result<FabricStatus> GetFabricStatus(const std::string& state_dir, const FabricHost& host);

std::string RenderStatusTable(const FabricStatus& status);
std::string RenderStatusJson(const FabricStatus& status);

}  // namespace fdrill

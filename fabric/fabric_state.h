// The emulated fabric's description: what `fdrill fabric up` built, written
// to <state_dir>/fabric.json and read back by `down`, `status`, `exec`, `rsh`
// and the controller (LoadFabricState).
//
// Naming (FabricLayout::Default()):
//   node i            name "n<i>", netns "fdrill-n<i>", hostname "n<i>" (own UTS
//                     namespace, kept alive by a bind mount at <state_dir>/n<i>/uts)
//   management        root-ns bridge "fdm-br" 198.19.0.254/24 (the controller);
//                     veth "fdm-n<i>" (root, on fdm-br) <-> "mgmt0" 198.19.0.<i+1>/24
//   fabric            netns "fdrill-sw" holding bridge "br0"; veth "swp<i>" (in
//                     fdrill-sw, on br0) <-> "fab0" 198.18.0.<i+1>/24 (in the node)
//   per node          TMPDIR <state_dir>/n<i>/tmp, agent state <state_dir>/n<i>/state,
//                     agent log <state_dir>/n<i>/agent.log, agent on mgmt0 port 7100
//   certificates      <state_dir>/pki (0700): ca.pem/.key, controller.pem/.key,
//                     n<i>.pem/.key, made by `up`; agents serve mutual TLS
// Every object the fabric creates carries a layout prefix, so teardown finds
// them by name even after a crash that lost fabric.json. Tests use another
// layout (other prefixes, state dir and management subnet) so they never touch
// a user's fabric.
//
// Pure data and JSON; touches nothing except through SysFs in Load/Save.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/host/host.h"

namespace fdrill {

inline constexpr int kMaxFabricNodes = 200;  // node addresses .1-.200 of one /24
inline constexpr char kDefaultFabricDir[] = "/run/fdrill/fabric";

struct FabricLayout {
  std::string state_dir;     // "/run/fdrill/fabric"
  std::string netns_prefix;  // "fdrill-": node netns <prefix>n<i>, switch <prefix>sw
  std::string root_prefix;   // "fdm-": root-ns links <prefix>br, <prefix>n<i> (<= 7 chars)
  std::string mgmt_net;      // "198.19.0": first three octets of the management /24
  std::string fabric_net;    // "198.18.0": first three octets of the fabric /24
  int agent_port = 7100;

  static FabricLayout Default();
  std::string StateFile() const { return state_dir + "/fabric.json"; }
  std::string PkiDir() const { return state_dir + "/pki"; }
  std::string SwitchNetns() const { return netns_prefix + "sw"; }
  std::string MgmtBridge() const { return root_prefix + "br"; }
};

struct FabricNode {
  std::string name;         // "n0"
  std::string netns;        // "fdrill-n0"
  std::string uts_path;     // bind mount of the node's UTS namespace
  std::string mgmt_if;      // "mgmt0"
  std::string mgmt_addr;    // "198.19.0.1/24"
  std::string mgmt_peer;    // "fdm-n0": the root-ns end of the management veth
  std::string fabric_if;    // "fab0"
  std::string fabric_addr;  // "198.18.0.1/24"
  std::string switch_port;  // "swp0": the switch-ns end of the fabric veth
  std::string tmpdir;       // TMPDIR inside the node
  std::string state_dir;    // the agent's --state-dir
  std::string agent_log;
  int agent_port = 7100;
  int agent_pid = 0;  // 0: not started

  std::string NetnsPath() const { return "/run/netns/" + netns; }
  std::string MgmtIp() const;    // mgmt_addr without the prefix length
  std::string FabricIp() const;  // fabric_addr without the prefix length
};

struct FabricState {
  int version = 1;
  std::string state_dir;
  std::string switch_netns;     // "fdrill-sw"
  std::string switch_bridge;    // "br0"
  std::string mgmt_bridge;      // "fdm-br"
  std::string controller_addr;  // "198.19.0.254/24" on mgmt_bridge
  std::string agent_bin;        // absolute path of the agent every node runs
  // ca.pem, controller.pem/.key, <node>.pem/.key; the agents serve mutual TLS
  // with them and `fdrill run` dials with controller.pem. "": the agents run
  // --insecure (plaintext), and `fdrill run` must be told --insecure too.
  std::string pki_dir;
  std::vector<FabricNode> nodes;

  // By node name ("n1"), fabric or management address ("198.18.0.2"), or
  // "user@host" as Open MPI may pass it. nullptr when nothing matches.
  const FabricNode* FindNode(const std::string& host) const;
};

// The fabric `up` builds for `nodes` nodes (1..kMaxFabricNodes); agent pids 0.
Result<FabricState> PlanFabric(const FabricLayout& layout, int nodes, const std::string& agent_bin);

std::string FabricStateToJson(const FabricState& state);
Result<FabricState> FabricStateFromJson(const std::string& json);

// NotFound when <dir>/fabric.json does not exist; InvalidArgument when it is
// not a fabric description.
Result<FabricState> LoadFabricState(SysFs& fs, const std::string& dir);
// Same, on the real file system; default dir is the user's fabric.
Result<FabricState> LoadFabricState(const std::string& dir = kDefaultFabricDir);
Status SaveFabricState(SysFs& fs, const FabricState& state);

}  // namespace fdrill

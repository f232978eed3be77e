// The emulated fabric's description: what `fdrill fabric up` built, written
// to <state_dir>/fabric.json and read back by `down`, `status`, `exec`, `rsh`
// and the controller (LoadFabricState).
//
// Naming (FabricLayout::Default()):
//   node i            name "n<i>", netns "fdrill-n<i>", hostname "n<i>" (own UTS
//                     namespace, kept alive by a bind mount at <state_dir>/n<i>/uts)
//   management        root-ns bridge "fdm-br" 198.19.0.254/24 (the controller);
//                     veth "fdm-n<i>" (root, on fdm-br) <-> "mgmt0" 198.19.0.<i+1>/24
//   rails             rail r: interface "fab<r>" on every node, 198.18.<r>.<i+1>/24
//                     (the layout's fabric_net, third octet + r)
//   leaf switches     a namespace each, holding bridge "br0"; node i's rail-r
//                     port is veth "swp<i>" on leaf i / (nodes / leaves) of rail r
//                     <-> "fab<r>" in the node. One rail, one leaf (the
//                     default): the one switch is "sw" (netns "fdrill-sw");
//                     else "rail<r>-leaf<l>" (netns "fdrill-rail<r>-leaf<l>")
//   spine             with more than one leaf per rail, "rail<r>-spine": leaf l's
//                     uplink "up0" <-> the spine's "dn<l>", on the spine's br0
//   capacity          with a port rate, every switch port's egress carries a
//                     tbf root qdisc (handle 1:): swp* at the port rate, up0 and
//                     dn* at port rate x nodes per leaf / oversubscription. A
//                     node's fab* keeps the kernel's default qdisc, for faults.
//   per node          TMPDIR <state_dir>/n<i>/tmp, agent state <state_dir>/n<i>/state,
//                     agent log <state_dir>/n<i>/agent.log, agent on mgmt0 port 7100
//   supervisor        one root-namespace process restarting dead agents,
//                     log <state_dir>/supervisor.log; it rewrites fabric.json
//                     (agent_pid, agent_restarts) whole on each restart
//   sshd (--sshd)     one OpenSSH sshd per node on <mgmt ip>:22, keys and configs in
//                     <state_dir>/ssh (fabric/sshd.h); `ssh -F <state_dir>/ssh/config n2`
//   Slurm (--slurm)   munged and slurmctld on the controller side, one slurmd per
//                     node; <state_dir>/slurm (fabric/slurm.h); SLURM_CONF=.../slurm.conf
//   certificates      <state_dir>/pki (0700): ca.pem/.key, controller.pem/.key,
//                     n<i>.pem/.key, made by `up`; agents serve mutual TLS
// Every object the fabric creates carries a layout prefix, so teardown finds
// them by name even after a crash that lost fabric.json. Tests use another
// layout (other prefixes, state dir and management subnet) so they never touch
// a user's fabric.
//
// Pure data and JSON; touches nothing except through SysFs in Load/Save.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/core/result.h"
#include "common/host/host.h"
#include "fabric/fabric_shape.h"

namespace fdrill {

inline constexpr char kDefaultFabricDir[] = "/run/fdrill/fabric";
// FDRILL_FABRIC=NAME: every fdrill command means the fabric NAME, so two
// fabrics (a demo and a test run, two tests) can be up side by side.
inline constexpr char kFabricNameEnv[] = "FDRILL_FABRIC";
// 1 to 4 of a-z and 0-9 (the root-ns link prefix "fdNAME." must fit 7 bytes).
Status CheckFabricName(const std::string& name);
// FDRILL_FABRIC's value, "" when unset; CheckFabricName has not been run on it.
std::string CurrentFabricName();
// FabricLayout::Current().state_dir.
std::string DefaultFabricDir();
// Named fabrics take management /24s 198.19.1.0 to 198.19.199.0 (0 is the
// default fabric's; from 200 up is left to tests' own layouts).
inline constexpr int kFirstNamedMgmtNet = 1;
inline constexpr int kLastNamedMgmtNet = 199;
// Switch agents' management addresses: .201-.253 of the management /24.
inline constexpr int kFirstSwitchHost = 201;
inline constexpr int kMaxFabricSwitches = 53;

struct FabricLayout {
  std::string state_dir;     // "/run/fdrill/fabric"
  std::string netns_prefix;  // "fdrill-": node netns <prefix>n<i>, switch <prefix><switch name>
  std::string root_prefix;   // "fdm-": root-ns links <prefix>br, <prefix>n<i> (<= 7 chars)
  std::string mgmt_net;      // "198.19.0": first three octets of the management /24
  std::string fabric_net;    // "198.18.0": first three octets of rail 0's /24
  int agent_port = 7100;

  static FabricLayout Default();
  // The fabric named NAME (FDRILL_FABRIC=NAME), beside the default one:
  // state dir /run/fdrill/fabric-NAME, namespaces fdrill.NAME-n<i>, root-ns
  // links fdNAME.br / fdNAME.n<i>. Its management /24 is chosen when it comes
  // up (FreeMgmtNet) and kept in its fabric.json; mgmt_net is empty until
  // then. The fabric's own rails keep 198.18.0.x: they live only inside its
  // namespaces, so scenarios read the same on every fabric. "" is Default().
  static FabricLayout Named(const std::string& name);
  // The fabric every command means: FDRILL_FABRIC's, else the default one.
  static FabricLayout Current();
  std::string StateFile() const { return state_dir + "/fabric.json"; }
  std::string PkiDir() const { return state_dir + "/pki"; }
  std::string MgmtBridge() const { return root_prefix + "br"; }
};

// One fabric interface of a node: its rail's link to a leaf switch.
struct NodePort {
  int rail = 0;
  std::string ifname;          // "fab0"
  std::string addr;            // "198.18.0.1/24"
  std::string leaf;            // the switch's name: "sw", "rail0-leaf1"
  std::string leaf_port;       // that switch's end of the link: "swp0"
  std::string Ip() const;      // addr without the prefix length
  std::string Subnet() const;  // "198.18.0.0/24"
};

// A switch port and what is cabled to it.
struct SwitchPort {
  std::string name;       // "swp0", "up0", "dn1"
  std::string peer;       // "n0:fab0", "rail0-spine:dn1", "rail0-leaf1:up0"
  uint64_t rate_bps = 0;  // modelled egress capacity (tbf root 1:); 0: unshaped
};

struct FabricNode {
  std::string name;              // "n0"
  std::string netns;             // "fdrill-n0"
  std::string uts_path;          // bind mount of the node's UTS namespace
  std::string mgmt_if;           // "mgmt0"
  std::string mgmt_addr;         // "198.19.0.1/24"
  std::string mgmt_peer;         // "fdm-n0": the root-ns end of the management veth
  std::vector<NodePort> fabric;  // one per rail, rail 0 first
  std::string tmpdir;            // TMPDIR inside the node
  std::string state_dir;         // the agent's --state-dir
  // The node's own files: <files_root>/etc/fdrill and <files_root>/var/lib/fdrill
  // are what processes in the node see at /etc/fdrill and /var/lib/fdrill
  // (fabric/node_enter.h), as each real node has its own. "": the machine's
  // (fabrics written before, and the switches' agents).
  std::string files_root;
  std::string agent_log;
  int agent_port = 7100;
  int agent_pid = 0;       // 0: not started; the supervisor rewrites it on each restart
  int agent_restarts = 0;  // how often the supervisor started it again
  int sshd_pid = 0;        // `up --sshd`: the node's sshd (fabric/sshd.h); 0: none
  int slurmd_pid = 0;      // `up --slurm`: the node's slurmd (fabric/slurm.h); 0: none

  // <state_dir>/n<i>: the directory holding the node's tmp/, state/ and logs.
  std::string Dir() const;

  std::string NetnsPath() const { return "/run/netns/" + netns; }
  std::string MgmtIp() const;    // mgmt_addr without the prefix length
  std::string FabricIp() const;  // rail 0's address without the prefix length
};

struct FabricSwitch {
  std::string name;  // "sw", "rail0-leaf1", "rail0-spine"
  std::string role;  // "leaf" or "spine"
  int rail = 0;
  std::string netns;   // <netns_prefix><name>
  std::string bridge;  // "br0"
  std::vector<SwitchPort> ports;
  // The switch's management side, as a node's: its namespace is `netns`, its
  // management veth <root_prefix>s<k> <-> mgmt0 at <mgmt_net>.<201+k>, its
  // own UTS namespace (hostname = the switch's name), TMPDIR, state dir and
  // log under <state_dir>/<name>/, and an agent started with --role switch.
  // `fabric` is empty.
  FabricNode agent;

  const SwitchPort* FindPort(const std::string& port) const;
  std::string PortNames() const;  // "swp0, swp1, up0" for messages
};

struct FabricState {
  int version = 2;
  std::string state_dir;
  FabricShape shape;
  std::string mgmt_bridge;      // "fdm-br"
  std::string controller_addr;  // "198.19.0.254/24" on mgmt_bridge
  std::string agent_bin;        // absolute path of the agent every node runs
  // ca.pem, controller.pem/.key, <node>.pem/.key; the agents serve mutual TLS
  // with them and `fdrill run` dials with controller.pem. "": the agents run
  // --insecure (plaintext), and `fdrill run` must be told --insecure too.
  std::string pki_dir;
  std::vector<FabricNode> nodes;
  std::vector<FabricSwitch> switches;  // per rail its leaves, then its spine
  // The agents' supervisor (fabric/agent_supervisor.h), a root-namespace
  // process `up` starts last; 0: none (a fabric `up` left unsupervised, or
  // one from before supervision).
  int supervisor_pid = 0;
  // `up --sshd`: <state_dir>/ssh, holding the keys, sshd_config and the
  // client's config (fabric/sshd.h); "": the nodes run no sshd.
  std::string ssh_dir;
  // `up --slurm`: <state_dir>/slurm (fabric/slurm.h), and the controller
  // side's munged and slurmctld; "" and 0: no Slurm.
  std::string slurm_dir;
  int munged_pid = 0;
  int slurmctld_pid = 0;
  // Mount points `up` made on the machine for the nodes' own files
  // (kNodeLocalDirs that did not exist); `down` removes them when empty.
  std::vector<std::string> made_dirs;

  const FabricSwitch* FindSwitch(const std::string& name) const;
  // Every agent the fabric runs: the nodes', then the switches'.
  std::vector<const FabricNode*> AgentHosts() const;
  std::vector<FabricNode*> AgentHosts();
  // A node or switch by name (a node also by address, as FindNode).
  const FabricNode* FindAgentHost(const std::string& name) const;
  // Every rail's subnet, rail 0 first ("198.18.0.0/24,198.18.1.0/24" joined).
  std::vector<std::string> RailSubnets() const;

  // By node name ("n1"), fabric or management address ("198.18.0.2"), or
  // "user@host" as Open MPI may pass it. nullptr when nothing matches.
  const FabricNode* FindNode(const std::string& host) const;
};

// CheckShape's refusals, and rails that do not fit after the layout's
// fabric_net (rail r takes its third octet + r), naming the flag.
Status CheckShape(const FabricLayout& layout, const FabricShape& shape);

// The fabric `up` builds for `shape`; agent pids 0.
Result<FabricState> PlanFabric(const FabricLayout& layout, const FabricShape& shape,
                               const std::string& agent_bin);
// A flat fabric of `nodes` nodes (one rail, one leaf, unshaped).
Result<FabricState> PlanFabric(const FabricLayout& layout, int nodes, const std::string& agent_bin);

// fabric.json, version 2. Reading also takes version 1 (one flat switch,
// written before rails), so a fabric left up across an upgrade still comes
// down with its agents, and a version 2 file without supervisor_pid or
// agent_restarts (written before supervision): 0.
std::string FabricStateToJson(const FabricState& state);
// The switches and their cabling as `fdrill inventory` and a run's
// inventory.json list them (docs/reference/formats.md "switches"): a JSON array text.
std::string SwitchesJson(const FabricState& state);
Result<FabricState> FabricStateFromJson(const std::string& json);

// NotFound when <dir>/fabric.json does not exist; InvalidArgument when it is
// not a fabric description.
Result<FabricState> LoadFabricState(SysFs& fs, const std::string& dir);
// Same, on the real file system.
Result<FabricState> LoadFabricState(const std::string& dir);
// The fabric every command means (DefaultFabricDir()).
Result<FabricState> LoadFabricState();
Status SaveFabricState(SysFs& fs, const FabricState& state);

}  // namespace fdrill

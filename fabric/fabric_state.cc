#include "fabric/fabric_state.h"

#include <nlohmann/json.hpp>

#include "harness/host/real_process_runner.h"

namespace fdrill {

namespace {

std::string HostPart(const std::string& addr) { return addr.substr(0, addr.find('/')); }

}  // namespace

// fabric.json's keys are the members' names: each list serves writing and
// reading alike, and reading requires every key.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FabricNode, name, netns, uts_path, mgmt_if, mgmt_addr, mgmt_peer,
                                   fabric_if, fabric_addr, switch_port, tmpdir, state_dir,
                                   agent_log, agent_port, agent_pid)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FabricState, version, state_dir, switch_netns, switch_bridge,
                                   mgmt_bridge, controller_addr, agent_bin, pki_dir, nodes)

FabricLayout FabricLayout::Default() {
  FabricLayout layout;
  layout.state_dir = kDefaultFabricDir;
  layout.netns_prefix = "fdrill-";
  layout.root_prefix = "fdm-";
  layout.mgmt_net = "198.19.0";
  layout.fabric_net = "198.18.0";
  layout.agent_port = 7100;
  return layout;
}

std::string FabricNode::MgmtIp() const { return HostPart(mgmt_addr); }
std::string FabricNode::FabricIp() const { return HostPart(fabric_addr); }

const FabricNode* FabricState::FindNode(const std::string& host) const {
  std::string h = host.substr(host.find('@') == std::string::npos ? 0 : host.find('@') + 1);
  for (const auto& node : nodes) {
    if (h == node.name || h == node.FabricIp() || h == node.MgmtIp()) return &node;
  }
  return nullptr;
}

Result<FabricState> PlanFabric(const FabricLayout& layout, int nodes,
                               const std::string& agent_bin) {
  if (nodes < 1 || nodes > kMaxFabricNodes) {
    return InvalidArgument("--nodes must be 1.." + std::to_string(kMaxFabricNodes) + ", got " +
                           std::to_string(nodes));
  }
  // Linux interface names are at most 15 bytes: "<root_prefix>n199".
  if (layout.root_prefix.size() > 7)
    return InvalidArgument("root link prefix too long: " + layout.root_prefix);
  FabricState state;
  state.state_dir = layout.state_dir;
  state.switch_netns = layout.SwitchNetns();
  state.switch_bridge = "br0";
  state.mgmt_bridge = layout.MgmtBridge();
  state.controller_addr = layout.mgmt_net + ".254/24";
  state.agent_bin = agent_bin;
  for (int i = 0; i < nodes; ++i) {
    FabricNode n;
    std::string idx = std::to_string(i);
    std::string dir = layout.state_dir + "/n" + idx;
    n.name = "n" + idx;
    n.netns = layout.netns_prefix + n.name;
    n.uts_path = dir + "/uts";
    n.mgmt_if = "mgmt0";
    n.mgmt_addr = layout.mgmt_net + "." + std::to_string(i + 1) + "/24";
    n.mgmt_peer = layout.root_prefix + n.name;
    n.fabric_if = "fab0";
    n.fabric_addr = layout.fabric_net + "." + std::to_string(i + 1) + "/24";
    n.switch_port = "swp" + idx;
    n.tmpdir = dir + "/tmp";
    n.state_dir = dir + "/state";
    n.agent_log = dir + "/agent.log";
    n.agent_port = layout.agent_port;
    state.nodes.push_back(std::move(n));
  }
  return state;
}

std::string FabricStateToJson(const FabricState& state) {
  return nlohmann::json(state).dump(2) + "\n";
}

Result<FabricState> FabricStateFromJson(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    const int version = j.at("version").get<int>();
    if (version != 1)
      return InvalidArgument("unsupported fabric.json version " + std::to_string(version));
    // No pki_dir: written before TLS; its agents were plaintext.
    if (!j.contains("pki_dir")) j["pki_dir"] = "";
    return j.get<FabricState>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("not a fabric description: ") + e.what());
  }
}

Result<FabricState> LoadFabricState(SysFs& fs, const std::string& dir) {
  std::string path = dir + "/fabric.json";
  if (!fs.Exists(path)) return NotFound("no fabric (" + path + " does not exist)");
  auto text = fs.Read(path);
  if (!text.ok()) return text.status();
  return FabricStateFromJson(*text).Annotate(path);
}

Result<FabricState> LoadFabricState(const std::string& dir) {
  RealSysFs fs;
  return LoadFabricState(fs, dir);
}

Status SaveFabricState(SysFs& fs, const FabricState& state) {
  return fs.Write(state.state_dir + "/fabric.json", FabricStateToJson(state));
}

}  // namespace fdrill

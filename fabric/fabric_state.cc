#include "fabric/fabric_state.h"

#include <nlohmann/json.hpp>

#include "harness/host/real_process_runner.h"

namespace fdrill {

namespace {

std::string HostPart(const std::string& addr) { return addr.substr(0, addr.find('/')); }

}  // namespace

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
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : state.nodes) {
    nodes.push_back({{"name", n.name},
                     {"netns", n.netns},
                     {"uts_path", n.uts_path},
                     {"mgmt_if", n.mgmt_if},
                     {"mgmt_addr", n.mgmt_addr},
                     {"mgmt_peer", n.mgmt_peer},
                     {"fabric_if", n.fabric_if},
                     {"fabric_addr", n.fabric_addr},
                     {"switch_port", n.switch_port},
                     {"tmpdir", n.tmpdir},
                     {"state_dir", n.state_dir},
                     {"agent_log", n.agent_log},
                     {"agent_port", n.agent_port},
                     {"agent_pid", n.agent_pid}});
  }
  nlohmann::json j = {{"version", state.version},
                      {"state_dir", state.state_dir},
                      {"switch_netns", state.switch_netns},
                      {"switch_bridge", state.switch_bridge},
                      {"mgmt_bridge", state.mgmt_bridge},
                      {"controller_addr", state.controller_addr},
                      {"agent_bin", state.agent_bin},
                      {"pki_dir", state.pki_dir},
                      {"nodes", nodes}};
  return j.dump(2) + "\n";
}

Result<FabricState> FabricStateFromJson(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    FabricState s;
    s.version = j.at("version").get<int>();
    if (s.version != 1)
      return InvalidArgument("unsupported fabric.json version " + std::to_string(s.version));
    s.state_dir = j.at("state_dir").get<std::string>();
    s.switch_netns = j.at("switch_netns").get<std::string>();
    s.switch_bridge = j.at("switch_bridge").get<std::string>();
    s.mgmt_bridge = j.at("mgmt_bridge").get<std::string>();
    s.controller_addr = j.at("controller_addr").get<std::string>();
    s.agent_bin = j.at("agent_bin").get<std::string>();
    s.pki_dir = j.value("pki_dir", "");  // absent: written before TLS; its agents were plaintext
    for (const auto& jn : j.at("nodes")) {
      FabricNode n;
      n.name = jn.at("name").get<std::string>();
      n.netns = jn.at("netns").get<std::string>();
      n.uts_path = jn.at("uts_path").get<std::string>();
      n.mgmt_if = jn.at("mgmt_if").get<std::string>();
      n.mgmt_addr = jn.at("mgmt_addr").get<std::string>();
      n.mgmt_peer = jn.at("mgmt_peer").get<std::string>();
      n.fabric_if = jn.at("fabric_if").get<std::string>();
      n.fabric_addr = jn.at("fabric_addr").get<std::string>();
      n.switch_port = jn.at("switch_port").get<std::string>();
      n.tmpdir = jn.at("tmpdir").get<std::string>();
      n.state_dir = jn.at("state_dir").get<std::string>();
      n.agent_log = jn.at("agent_log").get<std::string>();
      n.agent_port = jn.at("agent_port").get<int>();
      n.agent_pid = jn.at("agent_pid").get<int>();
      s.nodes.push_back(std::move(n));
    }
    return s;
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

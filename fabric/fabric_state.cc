#include "fabric/fabric_state.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "common/core/json.h"
#include "common/host/real_process_runner.h"

namespace fdrill {

namespace {

std::string HostPart(const std::string& addr) { return addr.substr(0, addr.find('/')); }

}  // namespace

// fabric.json's keys are the members' names: each list serves writing and
// reading alike, and reading requires every key.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FabricShape, nodes, rails, leaves, oversubscription,
                                   port_rate_bps)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(NodePort, rail, ifname, addr, leaf, leaf_port)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SwitchPort, name, peer, rate_bps)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FabricNode, name, netns, uts_path, mgmt_if, mgmt_addr, mgmt_peer,
                                   fabric, tmpdir, state_dir, files_root, agent_log, agent_port,
                                   agent_pid, agent_restarts, sshd_pid, slurmd_pid)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FabricSwitch, name, role, rail, netns, bridge, ports, agent)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FabricState, version, state_dir, shape, mgmt_bridge,
                                   controller_addr, agent_bin, pki_dir, nodes, switches,
                                   supervisor_pid, ssh_dir, slurm_dir, munged_pid, slurmctld_pid,
                                   made_dirs)

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

Status CheckFabricName(const std::string& name) {
  const bool ok =
      !name.empty() && name.size() <= 4 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
      });
  if (ok) return Status::Ok();
  return InvalidArgument(std::string(kFabricNameEnv) + "=" + name +
                         ": a fabric's name is 1 to 4 of a-z and 0-9 (e.g. " + kFabricNameEnv +
                         "=t1); unset it for the default fabric");
}

std::string CurrentFabricName() {
  const char* name = std::getenv(kFabricNameEnv);
  return name == nullptr ? "" : name;
}

FabricLayout FabricLayout::Named(const std::string& name) {
  FabricLayout layout = Default();
  if (name.empty()) return layout;
  layout.state_dir = std::string(kDefaultFabricDir) + "-" + name;
  layout.netns_prefix = "fdrill." + name + "-";
  layout.root_prefix = "fd" + name + ".";
  layout.mgmt_net.clear();
  return layout;
}

FabricLayout FabricLayout::Current() { return Named(CurrentFabricName()); }

std::string DefaultFabricDir() { return FabricLayout::Current().state_dir; }

std::string NodePort::Ip() const { return HostPart(addr); }

std::string NodePort::Subnet() const {
  std::string ip = Ip();
  auto slash = addr.find('/');
  return ip.substr(0, ip.rfind('.')) + ".0/" +
         (slash == std::string::npos ? "24" : addr.substr(slash + 1));
}

const SwitchPort* FabricSwitch::FindPort(const std::string& port) const {
  for (const auto& p : ports)
    if (p.name == port) return &p;
  return nullptr;
}

std::string FabricSwitch::PortNames() const {
  std::string out;
  for (const auto& p : ports) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

std::string FabricNode::MgmtIp() const { return HostPart(mgmt_addr); }
std::string FabricNode::FabricIp() const { return fabric.empty() ? "" : fabric.front().Ip(); }
std::string FabricNode::Dir() const {
  const size_t slash = agent_log.rfind('/');
  return slash == std::string::npos ? std::string() : agent_log.substr(0, slash);
}

const FabricSwitch* FabricState::FindSwitch(const std::string& name) const {
  for (const auto& sw : switches)
    if (sw.name == name) return &sw;
  return nullptr;
}

std::vector<const FabricNode*> FabricState::AgentHosts() const {
  std::vector<const FabricNode*> out;
  for (const auto& n : nodes) out.push_back(&n);
  for (const auto& sw : switches) out.push_back(&sw.agent);
  return out;
}

std::vector<FabricNode*> FabricState::AgentHosts() {
  std::vector<FabricNode*> out;
  for (auto& n : nodes) out.push_back(&n);
  for (auto& sw : switches) out.push_back(&sw.agent);
  return out;
}

const FabricNode* FabricState::FindAgentHost(const std::string& name) const {
  if (const FabricNode* n = FindNode(name)) return n;
  for (const auto& sw : switches)
    if (sw.name == name) return &sw.agent;
  return nullptr;
}

std::vector<std::string> FabricState::RailSubnets() const {
  std::vector<std::string> out;
  if (nodes.empty()) return out;
  for (const auto& port : nodes.front().fabric) out.push_back(port.Subnet());
  return out;
}

const FabricNode* FabricState::FindNode(const std::string& host) const {
  std::string h = host.substr(host.find('@') == std::string::npos ? 0 : host.find('@') + 1);
  for (const auto& node : nodes) {
    if (h == node.name || h == node.MgmtIp()) return &node;
    for (const auto& port : node.fabric)
      if (h == port.Ip()) return &node;
  }
  return nullptr;
}

Status CheckShape(const FabricLayout& layout, const FabricShape& shape) {
  if (Status s = CheckShape(shape); !s.ok()) return s;
  unsigned a = 0, b = 0, c = 0;
  if (std::sscanf(layout.fabric_net.c_str(), "%u.%u.%u", &a, &b, &c) != 3 ||
      c + static_cast<unsigned>(shape.rails) - 1 > 255) {
    return InvalidArgument("--rails " + std::to_string(shape.rails) + " does not fit after " +
                           layout.fabric_net + ".0/24 (rail r takes the third octet + r)");
  }
  return Status::Ok();
}

namespace {

// "198.18.0" + rail 2 -> "198.18.2". CheckShape has made sure it fits.
std::string RailNet(const std::string& fabric_net, int rail) {
  auto dot = fabric_net.rfind('.');
  return fabric_net.substr(0, dot + 1) +
         std::to_string(std::stoi(fabric_net.substr(dot + 1)) + rail);
}

}  // namespace

Result<FabricState> PlanFabric(const FabricLayout& layout, const FabricShape& shape,
                               const std::string& agent_bin) {
  if (Status s = CheckShape(layout, shape); !s.ok()) return s;
  // Linux interface names are at most 15 bytes: "<root_prefix>n199".
  if (layout.root_prefix.size() > 7)
    return InvalidArgument("root link prefix too long: " + layout.root_prefix);
  if (layout.mgmt_net.empty())
    return InvalidArgument("no management network chosen for the fabric at " + layout.state_dir +
                           " (FreeMgmtNet chooses one for a named fabric)");
  FabricState state;
  state.state_dir = layout.state_dir;
  state.shape = shape;
  state.mgmt_bridge = layout.MgmtBridge();
  state.controller_addr = layout.mgmt_net + ".254/24";
  state.agent_bin = agent_bin;
  const int per_leaf = shape.NodesPerLeaf();
  for (int r = 0; r < shape.rails; ++r) {
    for (int l = 0; l < shape.leaves; ++l) {
      FabricSwitch sw;
      sw.name = LeafName(shape, r, l);
      sw.role = "leaf";
      sw.rail = r;
      sw.netns = layout.netns_prefix + sw.name;
      sw.bridge = "br0";
      for (int i = l * per_leaf; i < (l + 1) * per_leaf; ++i) {
        sw.ports.push_back({"swp" + std::to_string(i),
                            "n" + std::to_string(i) + ":fab" + std::to_string(r),
                            shape.port_rate_bps});
      }
      if (shape.leaves > 1)
        sw.ports.push_back(
            {"up0", SpineName(r) + ":dn" + std::to_string(l), shape.UplinkRateBps()});
      state.switches.push_back(std::move(sw));
    }
    if (shape.leaves > 1) {
      FabricSwitch spine;
      spine.name = SpineName(r);
      spine.role = "spine";
      spine.rail = r;
      spine.netns = layout.netns_prefix + spine.name;
      spine.bridge = "br0";
      for (int l = 0; l < shape.leaves; ++l)
        spine.ports.push_back(
            {"dn" + std::to_string(l), LeafName(shape, r, l) + ":up0", shape.UplinkRateBps()});
      state.switches.push_back(std::move(spine));
    }
  }
  if (state.switches.size() > static_cast<size_t>(kMaxFabricSwitches)) {
    return InvalidArgument(std::to_string(state.switches.size()) + " switches (" +
                           shape.Describe() + ") do not fit the management network: at most " +
                           std::to_string(kMaxFabricSwitches) +
                           " switch agents (.201-.253); use fewer --rails or --leaves");
  }
  for (size_t k = 0; k < state.switches.size(); ++k) {
    FabricSwitch& sw = state.switches[k];
    FabricNode& a = sw.agent;
    const std::string dir = layout.state_dir + "/" + sw.name;
    a.name = sw.name;
    a.netns = sw.netns;
    a.uts_path = dir + "/uts";
    a.mgmt_if = "mgmt0";
    a.mgmt_addr =
        layout.mgmt_net + "." + std::to_string(kFirstSwitchHost + static_cast<int>(k)) + "/24";
    a.mgmt_peer = layout.root_prefix + "s" + std::to_string(k);
    a.tmpdir = dir + "/tmp";
    a.state_dir = dir + "/state";
    a.agent_log = dir + "/agent.log";
    a.agent_port = layout.agent_port;
  }
  for (int i = 0; i < shape.nodes; ++i) {
    FabricNode n;
    std::string idx = std::to_string(i);
    std::string dir = layout.state_dir + "/n" + idx;
    n.name = "n" + idx;
    n.netns = layout.netns_prefix + n.name;
    n.uts_path = dir + "/uts";
    n.mgmt_if = "mgmt0";
    n.mgmt_addr = layout.mgmt_net + "." + std::to_string(i + 1) + "/24";
    n.mgmt_peer = layout.root_prefix + n.name;
    for (int r = 0; r < shape.rails; ++r) {
      n.fabric.push_back({r, "fab" + std::to_string(r),
                          RailNet(layout.fabric_net, r) + "." + std::to_string(i + 1) + "/24",
                          LeafName(shape, r, i / per_leaf), "swp" + idx});
    }
    n.tmpdir = dir + "/tmp";
    n.state_dir = dir + "/state";
    n.files_root = dir + "/root";
    n.agent_log = dir + "/agent.log";
    n.agent_port = layout.agent_port;
    state.nodes.push_back(std::move(n));
  }
  return state;
}

Result<FabricState> PlanFabric(const FabricLayout& layout, int nodes,
                               const std::string& agent_bin) {
  FabricShape shape;
  shape.nodes = nodes;
  return PlanFabric(layout, shape, agent_bin);
}

namespace {

// Version 1 fabrics ran no agent on their switch.
nlohmann::json SwitchWithoutAgent(const std::string& netns) {
  FabricNode none;
  none.name = "sw";
  none.netns = netns;
  return none;
}

// Version 1 (one switch, one fabric link per node) in version 2's terms.
void UpgradeFromV1(nlohmann::json& j) {
  const std::string netns = j.at("switch_netns").get<std::string>();
  const std::string bridge = j.at("switch_bridge").get<std::string>();
  nlohmann::json ports = nlohmann::json::array();
  for (auto& n : j.at("nodes")) {
    const std::string ifname = n.at("fabric_if").get<std::string>();
    const std::string port = n.at("switch_port").get<std::string>();
    ports.push_back({{"name", port},
                     {"peer", n.at("name").get<std::string>() + ":" + ifname},
                     {"rate_bps", 0}});
    n["fabric"] = nlohmann::json::array({{{"rail", 0},
                                          {"ifname", ifname},
                                          {"addr", n.at("fabric_addr")},
                                          {"leaf", "sw"},
                                          {"leaf_port", port}}});
  }
  j["shape"] = {{"nodes", j.at("nodes").size()},
                {"rails", 1},
                {"leaves", 1},
                {"oversubscription", 1.0},
                {"port_rate_bps", 0}};
  j["switches"] = nlohmann::json::array({{{"name", "sw"},
                                          {"role", "leaf"},
                                          {"rail", 0},
                                          {"netns", netns},
                                          {"bridge", bridge},
                                          {"ports", ports},
                                          {"agent", SwitchWithoutAgent(netns)}}});
  j["version"] = 2;
}

}  // namespace

std::string SwitchesJson(const FabricState& state) {
  nlohmann::json switches = nlohmann::json::array();
  for (const auto& sw : state.switches) {
    nlohmann::json ports = nlohmann::json::array();
    for (const auto& p : sw.ports) {
      ports.push_back({{"name", p.name}, {"to", p.peer}, {"rate_bps", p.rate_bps}});
    }
    switches.push_back({{"name", sw.name},
                        {"role", sw.role},
                        {"rail", sw.rail},
                        {"netns", sw.netns},
                        {"ports", ports}});
  }
  return DumpJson(switches);
}

std::string FabricStateToJson(const FabricState& state) {
  return DumpJson(nlohmann::json(state), 2) + "\n";
}

Result<FabricState> FabricStateFromJson(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    const int version = j.at("version").get<int>();
    if (version != 1 && version != 2)
      return InvalidArgument("unsupported fabric.json version " + std::to_string(version));
    if (version == 1) UpgradeFromV1(j);
    // No pki_dir: written before TLS; its agents were plaintext.
    if (!j.contains("pki_dir")) j["pki_dir"] = "";
    // Written before supervision: nobody supervises its agents.
    if (!j.contains("supervisor_pid")) j["supervisor_pid"] = 0;
    // Written before `up --sshd`: no sshd anywhere.
    if (!j.contains("ssh_dir")) j["ssh_dir"] = "";
    // Written before `up --slurm`: no Slurm.
    if (!j.contains("slurm_dir")) j["slurm_dir"] = "";
    for (const char* key : {"munged_pid", "slurmctld_pid"})
      if (!j.contains(key)) j[key] = 0;
    // Written before nodes had their own /etc/fdrill: nothing was made.
    if (!j.contains("made_dirs")) j["made_dirs"] = nlohmann::json::array();
    auto restarts_default = [](nlohmann::json& node) {
      if (node.is_object() && !node.contains("agent_restarts")) node["agent_restarts"] = 0;
      if (node.is_object() && !node.contains("sshd_pid")) node["sshd_pid"] = 0;
      if (node.is_object() && !node.contains("slurmd_pid")) node["slurmd_pid"] = 0;
      if (node.is_object() && !node.contains("files_root")) node["files_root"] = "";
    };
    for (auto& n : j.at("nodes")) restarts_default(n);
    for (auto& sw : j.at("switches"))
      if (sw.contains("agent")) restarts_default(sw["agent"]);
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

Result<FabricState> LoadFabricState() { return LoadFabricState(DefaultFabricDir()); }

Status SaveFabricState(SysFs& fs, const FabricState& state) {
  return fs.Write(state.state_dir + "/fabric.json", FabricStateToJson(state));
}

}  // namespace fdrill

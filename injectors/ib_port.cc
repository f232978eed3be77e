#include "injectors/ib_port.h"

#include <cstdlib>

#include "injectors/param_values.h"

namespace fdrill {

namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> Split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(Trim(s.substr(start, at == std::string::npos ? std::string::npos : at - start)));
    if (at == std::string::npos) return out;
    start = at + sep.size();
  }
}

// "4: ACTIVE" -> 4
std::optional<int> LeadingNumber(const std::string& text) {
  char* end = nullptr;
  long n = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != ':') return std::nullopt;
  return static_cast<int>(n);
}

// One libibmad list value ("1X or 4X", "2.5 Gbps or 10.0 Gbps (IBA extension)",
// "undefined (37)") back to its mask, given the names of its bits.
std::optional<int64_t> DecodeMask(std::string value, const std::map<std::string, int64_t>& bits) {
  auto undefined = value.find("undefined (");
  if (undefined != std::string::npos) {  // libibmad prints the whole raw value here
    return std::strtoll(value.c_str() + undefined + 11, nullptr, 10);
  }
  const std::string ext = " (IBA extension)";
  if (value.size() > ext.size() && value.compare(value.size() - ext.size(), ext.size(), ext) == 0) {
    value.resize(value.size() - ext.size());
  }
  int64_t mask = 0;
  for (const auto& item : Split(value, " or ")) {
    auto it = bits.find(item);
    if (it == bits.end()) return std::nullopt;
    mask |= it->second;
  }
  return mask;
}

const std::map<std::string, int64_t> kWidthBits = {
    {"1X", 1}, {"4X", 2}, {"8X", 4}, {"12X", 8}, {"2X", 16}};
const std::map<std::string, int64_t> kSpeedBits = {
    {"2.5 Gbps", 1}, {"5.0 Gbps", 2}, {"10.0 Gbps", 4}, {"Extended speed", 0}};
const std::map<std::string, int64_t> kExtSpeedBits = {{"0", 0},
                                                      {"No Extended Speed", 0},
                                                      {"Extended link speeds disabled", 30},
                                                      {"14.0625 Gbps", 1},
                                                      {"25.78125 Gbps", 2},
                                                      {"53.125 Gbps", 4},
                                                      {"106.25 Gbps", 8}};

}  // namespace

Result<IbPort> ReadIbPortParams(ParamReader& p, const Json& params) {
  IbPort port;
  auto device = p.String("device");
  if (!device.ok()) return device.status();
  if (device->find('/') != std::string::npos)
    return InvalidArgument("params.device: an HCA name like mlx5_0");
  port.device = *device;
  auto num = p.Int("port", 1, 1, 254);
  if (!num.ok()) return num.status();
  port.port = *num;
  auto lid = ReadIntOrHex(p, params, "lid", 1, 0xBFFF);  // unicast LIDs
  if (!lid.ok()) return lid.status();
  port.lid = *lid;
  auto root = p.String("sysfs_root", port.root);
  if (!root.ok()) return root.status();
  port.root = *root;
  return port;
}

Result<IbRate> ParseIbRate(const std::string& text) {
  // "%d%s Gb/sec (%dX%s)" in drivers/infiniband/core/sysfs.c, speed with a leading space
  IbRate r;
  char* end = nullptr;
  r.gbps = std::strtod(text.c_str(), &end);
  auto open = text.find('(');
  auto x = text.find('X', open == std::string::npos ? 0 : open);
  auto close = text.find(')', x == std::string::npos ? 0 : x);
  if (end == text.c_str() || open == std::string::npos || x == std::string::npos ||
      close == std::string::npos) {
    return Internal("cannot read IB rate \"" + Trim(text) +
                    "\" (expected like \"400 Gb/sec (4X NDR)\")");
  }
  r.lanes = std::atoi(text.c_str() + open + 1);
  r.speed = Trim(text.substr(x + 1, close - x - 1));
  return r;
}

int IbSpeedRank(const std::string& speed) {
  static const std::map<std::string, int> kRank = {{"SDR", 2},   {"DDR", 4},  {"QDR", 6},
                                                   {"FDR10", 7}, {"FDR", 8},  {"EDR", 10},
                                                   {"HDR", 12},  {"NDR", 14}, {"XDR", 16}};
  auto it = kRank.find(speed);
  return it == kRank.end() ? 0 : it->second;
}

Result<IbPortStatus> ReadIbPortStatus(SysFs* sysfs, const IbPort& port) {
  if (!sysfs) return Internal("no sysfs access given to the IB injector");
  if (!sysfs->Exists(port.Dir())) {
    // Name what the node has (as `fdrill inventory` lists it), so a typo
    // in a scenario's device/port reads as one.
    std::string have;
    if (auto devs = sysfs->List(port.root); devs.ok()) {
      for (const auto& dev : *devs) {
        auto ports = sysfs->List(port.root + "/" + dev + "/ports");
        for (const auto& p : ports.ok() ? *ports : std::vector<std::string>{})
          have += (have.empty() ? "" : ", ") + dev + "/" + p;
      }
    }
    return NotFound("no InfiniBand port " + port.Name() + " here (" + port.Dir() +
                    " does not exist; this node has " +
                    (have.empty() ? std::string("no HCA ports") : have) + ")");
  }
  IbPortStatus s;
  for (auto [file, text] :
       {std::pair{"state", &s.state_text}, {"phys_state", &s.phys_text}, {"rate", &s.rate}}) {
    auto v = sysfs->Read(port.Dir() + "/" + file);
    if (!v.ok()) return v.status();
    *text = Trim(*v);
  }
  auto state = LeadingNumber(s.state_text);
  auto phys = LeadingNumber(s.phys_text);
  if (!state || !phys) {
    return Internal("cannot read " + port.Dir() + " state \"" + s.state_text +
                    "\" / phys_state \"" + s.phys_text + "\" (expected like \"4: ACTIVE\")");
  }
  s.state = *state;
  s.phys = *phys;
  return s;
}

Result<int64_t> ResolveIbLid(SysFs* sysfs, const IbPort& port) {
  if (port.lid) return *port.lid;
  return ReadIbLid(sysfs, port);
}

Result<int64_t> ReadIbLid(SysFs* sysfs, const IbPort& port) {
  if (!sysfs) return Internal("no sysfs access given to the IB injector");
  auto v = sysfs->Read(port.Dir() + "/lid");
  if (!v.ok()) return v.status();
  char* end = nullptr;
  std::string text = Trim(*v);
  long long lid = std::strtoll(text.c_str(), &end, 16);  // sysfs prints "0x%x"
  if (end == text.c_str() || *end != '\0' || lid <= 0 || lid >= 0xC000) {
    return FailedPrecondition(
        port.Dir() + "/lid reads \"" + text +
        "\", not a unicast LID (is a subnet manager running?); give params.lid");
  }
  return static_cast<int64_t>(lid);
}

std::string IbLidArg(const IbPort& port, int64_t captured) {
  if (captured) return std::to_string(captured);
  if (port.lid) return std::to_string(*port.lid);
  return "<lid from " + port.Dir() + "/lid>";
}

std::vector<std::string> IbPortStateArgv(const IbPort& port, const std::string& lid,
                                         const std::vector<std::string>& op) {
  std::vector<std::string> argv = {"ibportstate",
                                   "-C",
                                   port.device,
                                   "-P",
                                   std::to_string(port.port),
                                   lid,
                                   std::to_string(port.port)};
  argv.insert(argv.end(), op.begin(), op.end());
  return argv;
}

Result<IbPortInfo> ParseIbPortInfo(const std::string& out) {
  IbPortInfo info;
  bool in_block = false;
  for (const auto& raw : Split(out, "\n")) {
    if (raw.find("PortInfo:") != std::string::npos) {  // "CA PortInfo:", "Initial CA/RT PortInfo:"
      if (in_block) break;                             // "After PortInfo set:", "Peer PortInfo:"
      in_block = true;
      continue;
    }
    auto colon = raw.find(':');
    if (!in_block || raw.empty() || raw[0] == '#' || colon == std::string::npos) continue;
    std::string name = raw.substr(0, colon);
    std::string value = raw.substr(colon + 1);
    value.erase(0, value.find_first_not_of('.'));
    value = Trim(value);
    if (name == "LinkState") info.link_state = value;
    if (name == "PhysLinkState") info.phys_state = value;
    const std::map<std::string, int64_t>* bits = nullptr;
    if (name.rfind("LinkWidth", 0) == 0) {
      bits = &kWidthBits;
    } else if (name.rfind("LinkSpeedExt", 0) == 0) {
      bits = &kExtSpeedBits;
    } else if (name.rfind("LinkSpeed", 0) == 0) {
      bits = &kSpeedBits;
    }
    if (!bits || info.Has(name)) continue;
    auto mask = DecodeMask(value, *bits);
    if (!mask) return Internal("cannot read ibportstate's " + name + " \"" + value + "\"");
    info.masks[name] = *mask;
  }
  if (!info.Has("LinkWidthEnabled") || !info.Has("LinkSpeedEnabled") || info.phys_state.empty()) {
    return Internal(
        "ibportstate printed no PortInfo (LinkWidthEnabled, LinkSpeedEnabled, PhysLinkState)");
  }
  return info;
}

Result<IbPortInfo> QueryIbPort(ProcessRunner& runner, const IbPort& port, int64_t lid) {
  auto out = RunChecked(runner, IbPortStateArgv(port, std::to_string(lid), {"query"}));
  if (!out.ok()) return out.status();
  return ParseIbPortInfo(*out);
}

namespace {
constexpr std::pair<int, int> kLaneBits[] = {
    {1, 1}, {2, 16}, {4, 2}, {8, 4}, {12, 8}};  // lanes, mask bit
}  // namespace

int IbWidthBit(int lanes) {
  for (auto [l, bit] : kLaneBits) {
    if (l == lanes) return bit;
  }
  return 0;
}

int IbWidthLanes(int64_t bit) {
  for (auto [lanes, b] : kLaneBits) {
    if (b == bit) return lanes;
  }
  return 0;
}

}  // namespace fdrill

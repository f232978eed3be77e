#include "agents/fake_host.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/core/json.h"

namespace fdrill {

namespace {

using Json = nlohmann::json;

ProcessResult Ok(std::string out = "") { return ProcessResult{0, std::move(out), ""}; }
ProcessResult NoDevice(const std::string& name) {
  return ProcessResult{1, "", "Cannot find device \"" + name + "\"\n"};
}

uint64_t Leading(const std::string& s) {
  try {
    return std::stoull(s);  // "100000000bit" -> 100000000
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

FakeHostKernel::FakeHostKernel() {
  ifaces_["lo"] = Iface{};
  ifaces_["mgmt0"] = Iface{};
  ifaces_["fab0"] = Iface{};
}

void FakeHostKernel::Record(const std::vector<std::string>& argv) {
  ++mutations_;
  recorded_.push_back(argv);
  if (recorded_.size() > kMaxRecorded) recorded_.pop_front();
}

Result<ProcessResult> FakeHostKernel::Run(const std::vector<std::string>& argv, Duration) {
  auto has = [&](size_t i, const char* s) { return argv.size() > i && argv[i] == s; };
  bool query = has(1, "-j") || has(1, "-s") || has(0, "iptables-save");
  if (!query) Record(argv);

  // ip -j route get ADDR: the model machine reaches everything over mgmt0
  // (its management path: agents/mgmt_guard.h); ip -j addr show to ADDR:
  // no interface holds it.
  if (has(0, "ip") && has(1, "-j") && has(2, "route") && has(3, "get") && argv.size() == 5)
    return ProcessResult{0, DumpJson(Json::array({{{"dst", argv[4]}, {"dev", "mgmt0"}}})), ""};
  if (has(0, "ip") && has(1, "-j") && has(2, "addr") && has(3, "show"))
    return ProcessResult{0, "[]", ""};

  // ip -j link show; ip -s -j link show (the counters sample: zeros)
  if (has(0, "ip") && (has(2, "link") || has(3, "link")) && query) {
    Json out = Json::array();
    int index = 1;
    for (const auto& [name, i] : ifaces_) {
      Json flags = Json::array({"BROADCAST", "MULTICAST"});
      if (i.up) flags.push_back("UP");
      Json link = {{"ifindex", index++},
                   {"ifname", name},
                   {"flags", flags},
                   {"operstate", i.up ? "UP" : "DOWN"}};
      if (has(1, "-s")) {
        Json zero = {{"bytes", 0}, {"packets", 0}, {"errors", 0}, {"dropped", 0}};
        link["stats64"] = {{"rx", zero}, {"tx", zero}};
      }
      out.push_back(std::move(link));
    }
    return Ok(DumpJson(out));
  }
  // tc -j qdisc show dev IF [root]; tc -s -j qdisc show
  if (has(0, "tc") && (has(2, "qdisc") || has(3, "qdisc")) && query) {
    Json out = Json::array();
    bool one = has(4, "dev");
    for (const auto& [name, i] : ifaces_) {
      if (one && argv.size() > 5 && argv[5] != name) continue;
      Json q = {{"kind", i.qdisc_kind},
                {"handle", i.qdisc_handle},
                {"root", true},
                {"dev", name},
                {"drops", 0},
                {"overlimits", 0},
                {"options", Json::object()}};
      if (i.qdisc_kind == "tbf") q["options"] = {{"rate", i.rate_bytes}, {"burst", i.burst}};
      out.push_back(std::move(q));
    }
    if (one && out.empty()) return NoDevice(argv.size() > 5 ? argv[5] : "");
    return Ok(DumpJson(out));
  }
  // ip -j neigh show dev IF
  if (has(0, "ip") && has(1, "-j") && has(2, "neigh") && has(3, "show") && has(4, "dev") &&
      argv.size() == 6) {
    auto it = ifaces_.find(argv[5]);
    if (it == ifaces_.end()) return NoDevice(argv[5]);
    Json out = Json::array();
    for (const auto& n : it->second.neighbours) {
      out.push_back({{"dst", n.dst},
                     {"lladdr", n.lladdr},
                     {"state", Json::array({n.permanent ? "PERMANENT" : "STALE"})}});
    }
    return Ok(DumpJson(out));
  }
  if (has(0, "tc") && query) return Ok("[]");  // class / filter show: none of ours
  if (has(0, "iptables-save")) return Ok("");
  // ip link set dev IF up|down
  if (has(0, "ip") && has(1, "link") && has(2, "set") && has(3, "dev") && argv.size() == 6) {
    auto it = ifaces_.find(argv[4]);
    if (it == ifaces_.end()) return NoDevice(argv[4]);
    it->second.up = argv[5] == "up";
    if (!it->second.up) it->second.neighbours.clear();  // the kernel's neigh_ifdown
    return Ok();
  }
  // ip neigh replace D lladdr L dev IF nud stale|permanent
  if (has(0, "ip") && has(1, "neigh") && has(2, "replace") && has(4, "lladdr") && has(6, "dev") &&
      has(8, "nud") && argv.size() == 10) {
    auto it = ifaces_.find(argv[7]);
    if (it == ifaces_.end()) return NoDevice(argv[7]);
    auto& all = it->second.neighbours;
    all.erase(std::remove_if(all.begin(), all.end(),
                             [&](const Iface::Neighbour& n) { return n.dst == argv[3]; }),
              all.end());
    all.push_back({argv[3], argv[5], argv[9] == "permanent"});
    return Ok();
  }
  // tc qdisc replace dev IF root handle H KIND ... (tbf: rate Nbit burst B)
  if (has(0, "tc") && has(1, "qdisc") && has(2, "replace") && has(3, "dev") && argv.size() > 8) {
    auto it = ifaces_.find(argv[4]);
    if (it == ifaces_.end()) return NoDevice(argv[4]);
    Iface& i = it->second;
    i.qdisc_handle = argv[7];
    i.qdisc_kind = argv[8];
    i.rate_bytes = argv.size() > 10 && argv[9] == "rate" ? Leading(argv[10]) / 8 : 0;
    i.burst = argv.size() > 12 && argv[11] == "burst" ? Leading(argv[12]) : 0;
    return Ok();
  }
  if (has(0, "tc") && has(1, "qdisc") && has(2, "del") && has(3, "dev") && argv.size() > 4) {
    auto it = ifaces_.find(argv[4]);
    if (it == ifaces_.end()) return NoDevice(argv[4]);
    if (it->second.qdisc_handle == "0:")
      return ProcessResult{2, "", "Error: Cannot delete qdisc with handle of zero.\n"};
    Iface& i = it->second;
    i = Iface{.up = i.up, .neighbours = std::move(i.neighbours)};
    return Ok();
  }
  return Ok();  // anything else: recorded, not run
}

Result<std::vector<LinkState>> FakeHostNetStack::Links() {
  std::vector<LinkState> out;
  for (const auto& [name, i] : kernel_.ifaces())
    out.push_back(LinkState{name, i.up, i.up ? "UP" : "DOWN", ""});
  return out;
}

Result<std::vector<Qdisc>> FakeHostNetStack::Qdiscs(const std::string& ifname) {
  auto it = kernel_.ifaces().find(ifname);
  if (it == kernel_.ifaces().end()) return NotFound("no interface \"" + ifname + "\" here");
  const FakeHostKernel::Iface& i = it->second;
  Qdisc q{i.qdisc_kind, i.qdisc_handle, "", Json::object()};
  if (i.qdisc_kind == "tbf") q.options = {{"rate", i.rate_bytes}, {"burst", i.burst}};
  return std::vector<Qdisc>{std::move(q)};
}

Result<std::vector<RootQdiscCounters>> FakeHostNetStack::RootCounters() {
  std::vector<RootQdiscCounters> out;
  for (const auto& [name, i] : kernel_.ifaces()) out.push_back(RootQdiscCounters{name, 0, 0});
  return out;
}

Result<std::vector<Neighbour>> FakeHostNetStack::Neighbours(const std::string& ifname) {
  auto it = kernel_.ifaces().find(ifname);
  if (it == kernel_.ifaces().end()) return NotFound("no interface \"" + ifname + "\" here");
  std::vector<Neighbour> out;
  for (const auto& n : it->second.neighbours)
    out.push_back(Neighbour{n.dst, n.lladdr, n.permanent ? "PERMANENT" : "STALE"});
  return out;
}

Status FakeHostNetStack::Apply(const NetChange& change) {
  auto r = RunChecked(kernel_, change.Argv());
  return r.ok() ? Status::Ok() : r.status();
}

namespace {

// The fake machine's sysfs files (FakeHostSysFs); built once, shared by every
// fake agent of a fleet. Directories are implied by the paths under them.
const std::map<std::string, std::string>& FakeSysfsTree() {
  static const auto* tree = [] {
    auto* t = new std::map<std::string, std::string>();  // never freed: lives as long as the fleet
    auto& f = *t;
    const std::string hca = "/sys/class/infiniband/mlx5_0";
    f[hca + "/node_guid"] = "0c42:a103:00fa:b000\n";
    f[hca + "/fw_ver"] = "28.39.1002\n";
    f[hca + "/device/numa_node"] = "0\n";
    f[hca + "/device/net/fab0/dev_port"] = "0\n";
    const std::string port = hca + "/ports/1";
    f[port + "/state"] = "4: ACTIVE\n";
    f[port + "/phys_state"] = "5: LinkUp\n";
    f[port + "/link_layer"] = "Ethernet\n";
    f[port + "/rate"] = "100 Gb/sec (4X EDR)\n";
    f[port + "/lid"] = "0x0\n";
    for (const char* c : {"port_xmit_data", "port_rcv_data", "port_xmit_packets",
                          "port_rcv_packets", "symbol_error", "link_error_recovery", "link_downed",
                          "port_rcv_errors", "port_xmit_discards", "port_xmit_wait"}) {
      f[port + "/counters/" + c] = "0\n";
    }
    struct Netdev {
      const char* name;
      const char* speed;
      const char* mtu;
      const char* mac;
    };
    for (const Netdev& n : {Netdev{"mgmt0", "10000", "1500", "02:fd:00:00:00:01"},
                            Netdev{"fab0", "100000", "9000", "02:fd:00:00:01:01"}}) {
      const std::string dir = std::string("/sys/class/net/") + n.name;
      f[dir + "/speed"] = std::string(n.speed) + "\n";
      f[dir + "/mtu"] = std::string(n.mtu) + "\n";
      f[dir + "/address"] = std::string(n.mac) + "\n";
      f[dir + "/device/numa_node"] = "0\n";
    }
    f["/sys/class/net/fab0/device/infiniband/mlx5_0/node_guid"] = f[hca + "/node_guid"];
    f["/sys/class/net/lo/mtu"] = "65536\n";
    f["/sys/devices/system/node/node0/cpulist"] = "0-7\n";
    return t;
  }();
  return *tree;
}

// "/sys/class/net/IF/operstate" -> IF; "" for any other path.
std::string OperstateOf(const std::string& path) {
  const std::string prefix = "/sys/class/net/", suffix = "/operstate";
  if (path.rfind(prefix, 0) != 0 || path.size() <= prefix.size() + suffix.size()) return "";
  if (path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0) return "";
  std::string name = path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
  return name.find('/') == std::string::npos ? name : "";
}

}  // namespace

Result<std::string> FakeHostSysFs::Read(const std::string& path) {
  // The counters sample's netdev statistics, as the kernel prints them:
  // every interface of the model, all zero.
  if (path == "/proc/net/dev") {
    std::string text =
        "Inter-|   Receive                                                |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
        "drop fifo colls carrier compressed\n";
    for (const auto& [name, _] : kernel_.ifaces())
      text += name + ": 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
    return text;
  }
  if (std::string name = OperstateOf(path); !name.empty()) {
    auto it = kernel_.ifaces().find(name);
    if (it != kernel_.ifaces().end()) {
      if (name == "lo") return std::string("unknown\n");  // as the kernel says for lo
      return std::string(it->second.up ? "up\n" : "down\n");
    }
  }
  const auto& tree = FakeSysfsTree();
  auto it = tree.find(path);
  if (it == tree.end()) return NotFound("fake host: no " + path);
  return it->second;
}

bool FakeHostSysFs::Exists(const std::string& path) {
  const auto& tree = FakeSysfsTree();
  if (tree.count(path)) return true;
  auto it = tree.lower_bound(path + "/");
  return it != tree.end() && it->first.rfind(path + "/", 0) == 0;
}

Result<std::vector<std::string>> FakeHostSysFs::List(const std::string& dir) {
  const std::string prefix = dir + "/";
  std::vector<std::string> names;
  const auto& tree = FakeSysfsTree();
  for (auto it = tree.lower_bound(prefix); it != tree.end() && it->first.rfind(prefix, 0) == 0;
       ++it) {
    std::string name = it->first.substr(prefix.size());
    name = name.substr(0, name.find('/'));
    if (names.empty() || names.back() != name) names.push_back(name);
  }
  if (dir == "/sys/class/net") {  // every interface of the kernel model, even one without files
    for (const auto& [name, _] : kernel_.ifaces()) names.push_back(name);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
  }
  if (names.empty()) return NotFound("fake host: no " + dir);
  return names;
}

}  // namespace fdrill

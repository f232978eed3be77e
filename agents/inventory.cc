#include "agents/inventory.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "agents/sysfs_text.h"
#include "injectors/ib_port.h"

namespace fdrill {

namespace {

// "4: ACTIVE" -> "ACTIVE", "5: LinkUp" -> "LinkUp" (drivers/infiniband/core/sysfs.c
// prints "%d: %s").
std::string AfterColon(const std::string& text) {
  auto colon = text.find(':');
  return colon == std::string::npos ? text : TrimSpace(text.substr(colon + 1));
}

void SetIf(Json& obj, const char* key, const std::optional<std::string>& v) {
  if (v) obj[key] = *v;
}
void SetIf(Json& obj, const char* key, const std::optional<int64_t>& v) {
  if (v) obj[key] = *v;
}

Json Port(SysFs& sysfs, const std::string& dir, int64_t port,
          const std::vector<std::string>& netdevs) {
  Json p = {{"port", port}};
  if (auto s = ReadSysText(sysfs, dir + "/state")) p["state"] = AfterColon(*s);
  if (auto s = ReadSysText(sysfs, dir + "/phys_state")) p["phys_state"] = AfterColon(*s);
  SetIf(p, "link_layer", ReadSysText(sysfs, dir + "/link_layer"));
  if (auto rate = ReadSysText(sysfs, dir + "/rate")) {
    p["rate"] = *rate;
    if (auto parsed = ParseIbRate(*rate); parsed.ok()) {
      double g = parsed->gbps;
      if (g == std::floor(g)) {
        p["rate_gbps"] = static_cast<int64_t>(g);
      } else {
        p["rate_gbps"] = g;  // "2.5 Gb/sec (1X SDR)"
      }
    }
  }
  SetIf(p, "lid", ReadSysInt(sysfs, dir + "/lid", 16));
  p["netdevs"] = netdevs;
  return p;
}

// One HCA; records which netdev belongs to it in `owner`.
Result<Json> Hca(SysFs& sysfs, const std::string& root, const std::string& name,
                 std::map<std::string, std::string>& owner) {
  const std::string dir = root + "/" + name;
  Json hca = {{"name", name}};
  SetIf(hca, "node_guid", ReadSysText(sysfs, dir + "/node_guid"));
  SetIf(hca, "fw_ver", ReadSysText(sysfs, dir + "/fw_ver"));
  SetIf(hca, "numa_node", ReadSysInt(sysfs, dir + "/device/numa_node"));

  std::map<int64_t, std::vector<std::string>> netdevs_of_port;
  auto nets = ListOrNone(sysfs, dir + "/device/net");
  if (!nets.ok()) return nets.status();
  for (const auto& ifname : *nets) {
    int64_t dev_port = ReadSysInt(sysfs, dir + "/device/net/" + ifname + "/dev_port").value_or(0);
    netdevs_of_port[dev_port + 1].push_back(ifname);
    owner[ifname] = name;
  }

  auto ports = ListOrNone(sysfs, dir + "/ports");
  if (!ports.ok()) return ports.status();
  hca["ports"] = Json::array();
  for (const auto& [n, entry] : NumberedEntries(*ports)) {
    hca["ports"].push_back(Port(sysfs, dir + "/ports/" + entry, n, netdevs_of_port[n]));
  }
  return hca;
}

Result<Json> Netdev(SysFs& sysfs, const std::string& root, const std::string& name,
                    const std::map<std::string, std::string>& owner) {
  const std::string dir = root + "/" + name;
  Json nd = {{"name", name}};
  SetIf(nd, "operstate", ReadSysText(sysfs, dir + "/operstate"));
  if (auto speed = ReadSysInt(sysfs, dir + "/speed"); speed && *speed >= 0)
    nd["speed_mbps"] = *speed;
  SetIf(nd, "mtu", ReadSysInt(sysfs, dir + "/mtu"));
  SetIf(nd, "mac", ReadSysText(sysfs, dir + "/address"));
  SetIf(nd, "numa_node", ReadSysInt(sysfs, dir + "/device/numa_node"));
  if (auto it = owner.find(name); it != owner.end()) {
    nd["ib_device"] = it->second;
  } else {
    auto ib = ListOrNone(sysfs, dir + "/device/infiniband");
    if (!ib.ok()) return ib.status();
    if (!ib->empty()) nd["ib_device"] = ib->front();
  }
  return nd;
}

// LIST: what DESCRIBE makes of each entry of the directory ROOT
// (an absent ROOT has none); an entry's error names it ("inventory: HCA
// mlx5_0").
template <typename Describe>
Status DescribeEach(SysFs& sysfs, const std::string& root, const std::string& what,
                    Describe describe, Json& list) {
  list = Json::array();
  auto names = ListOrNone(sysfs, root);
  if (!names.ok()) return names.status().Annotate("inventory");
  for (const auto& name : *names) {
    auto one = describe(name);
    if (!one.ok()) return one.status().Annotate("inventory: " + what + " " + name);
    list.push_back(std::move(*one));
  }
  return Status::Ok();
}

Json GpuLinks(Gpus& nvml, unsigned gpu) {
  Json links = Json::array();
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    auto active = nvml.NvLinkActive(gpu, link);
    if (!active.ok()) continue;  // the GPU has no such link (NOT_SUPPORTED / INVALID_ARGUMENT)
    Json l = {{"link", link}, {"state", *active ? "up" : "down"}};
    if (auto remote = nvml.NvLinkRemotePciBusId(gpu, link); remote.ok())
      l["remote_pci_bus_id"] = *remote;
    links.push_back(std::move(l));
  }
  return links;
}

}  // namespace

Json DiscoverGpus(Gpus* nvml) {
  Json out = {{"gpus", Json::array()}};
  if (nvml == nullptr) {
    out["nvml"] = "not used on this host (no NVML library given)";
    return out;
  }
  auto count = nvml->DeviceCount();  // loads the library first
  if (!count.ok()) {
    out["nvml"] = count.status().message();
    return out;
  }
  for (unsigned i = 0; i < *count; ++i) {
    Json g = {{"index", i}};
    if (auto v = nvml->DeviceName(i); v.ok()) g["name"] = *v;
    if (auto v = nvml->DeviceUuid(i); v.ok()) g["uuid"] = *v;
    if (auto v = nvml->PciBusId(i); v.ok()) g["pci_bus_id"] = *v;
    g["nvlinks"] = GpuLinks(*nvml, i);
    out["gpus"].push_back(std::move(g));
  }
  out["nvml"] = "ok";
  return out;
}

namespace {

// The interface names in /proc/net/dev text ("  fab0: 1234 ..." after two
// header lines), sorted; nullopt when PATH cannot be read.
std::optional<std::set<std::string>> OwnNetdevs(SysFs& sysfs, const std::string& path) {
  auto text = sysfs.Read(path);
  if (!text.ok()) return std::nullopt;
  std::set<std::string> names;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    const std::string line = text->substr(start, end - start);
    if (auto colon = line.find(':'); colon != std::string::npos)
      names.insert(TrimSpace(line.substr(0, colon)));
    start = end + 1;
  }
  return names;
}

}  // namespace

Result<Json> DiscoverInventory(SysFs& sysfs, Gpus* nvml, const InventoryPaths& paths) {
  Json inv = DiscoverGpus(nvml);

  std::map<std::string, std::string> owner;  // netdev -> HCA
  auto hca = [&](const std::string& name) { return Hca(sysfs, paths.infiniband, name, owner); };
  if (auto s = DescribeEach(sysfs, paths.infiniband, "HCA", hca, inv["hcas"]); !s.ok()) return s;
  // Which netdevs: /proc/net/dev is always the agent's own network
  // namespace; /sys/class/net is the namespace of whoever mounted that sysfs,
  // which for an agent that entered a namespace without mounting its own is
  // the machine's (eth0, fdm-br, ifb0 on every emulated node). Their details
  // come from sysfs only when it lists exactly the same names, so no node
  // reports another namespace's interface as its own.
  auto listed = ListOrNone(sysfs, paths.net);
  if (!listed.ok()) return listed.status().Annotate("inventory");
  const std::set<std::string> in_sysfs(listed->begin(), listed->end());
  const auto own = OwnNetdevs(sysfs, paths.net_dev);
  const bool sysfs_is_ours = !own || *own == in_sysfs;
  inv["netdevs"] = Json::array();
  for (const auto& name : own ? *own : in_sysfs) {
    if (name == "lo") continue;
    if (!sysfs_is_ours) {
      inv["netdevs"].push_back(Json{{"name", name}});
      continue;
    }
    auto one = Netdev(sysfs, paths.net, name, owner);
    if (!one.ok()) return one.status().Annotate("inventory: netdev " + name);
    inv["netdevs"].push_back(std::move(*one));
  }

  inv["numa"] = Json::array();
  auto nodes = ListOrNone(sysfs, paths.numa);
  if (!nodes.ok()) return nodes.status().Annotate("inventory");
  for (const auto& [n, entry] : NumberedEntries(*nodes, "node")) {
    Json node = {{"node", n}};
    SetIf(node, "cpus", ReadSysText(sysfs, paths.numa + "/" + entry + "/cpulist"));
    inv["numa"].push_back(std::move(node));
  }
  return inv;
}

}  // namespace fdrill

#include "injectors/rdma_reach.h"

#include <charconv>
#include <vector>

namespace fdrill {

namespace {

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The kinds of interface or ib_port scope whose reach has `bit`: what to
// use instead, in registry order.
std::string KindsReaching(unsigned bit) {
  std::string out;
  for (const auto& i : Injectors()) {
    if ((i.reach & bit) == 0 || (i.scope != Scope::kInterface && i.scope != Scope::kIbPort))
      continue;
    out += (out.empty() ? "" : ", ") + std::string(i.name);
  }
  return out;
}

}  // namespace

Result<std::optional<RdmaPort>> RdmaPortBehind(SysFs& sysfs, const std::string& ifname,
                                               const std::string& net_root,
                                               const std::string& ib_root) {
  const std::string dir = net_root + "/" + ifname;
  auto devices = sysfs.List(dir + "/device/infiniband");
  if (!devices.ok()) {
    if (devices.status().code() == StatusCode::kNotFound) return std::optional<RdmaPort>();
    return devices.status().Annotate("RDMA device behind " + ifname);
  }
  if (devices->empty()) return std::optional<RdmaPort>();
  RdmaPort port{devices->front(), 1, ""};
  if (auto dev_port = sysfs.Read(dir + "/dev_port"); dev_port.ok()) {
    const std::string text = Trimmed(*dev_port);
    int n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && end == text.data() + text.size() && n >= 0 && n < 255)
      port.port = n + 1;
  }
  const std::string layer_path =
      ib_root + "/" + port.device + "/ports/" + std::to_string(port.port) + "/link_layer";
  auto layer = sysfs.Read(layer_path);
  if (!layer.ok()) return layer.status().Annotate("RDMA port behind " + ifname);
  port.link_layer = Trimmed(*layer);
  if (port.link_layer != "InfiniBand" && port.link_layer != "Ethernet")
    return FailedPrecondition(layer_path + ": \"" + port.link_layer +
                              "\" is neither InfiniBand nor Ethernet");
  return std::optional<RdmaPort>(port);
}

Status CheckReachesRdma(const InjectorInfo& info, const Json& params, SysFs& sysfs,
                        const std::string& net_root, const std::string& ib_root) {
  if (info.scope != Scope::kInterface) return Status::Ok();
  std::vector<std::string> netdevs;
  if (params.is_object() && params.contains("interface") && params["interface"].is_string()) {
    netdevs.push_back(params["interface"].get<std::string>());
  } else {
    auto all = sysfs.List(net_root);
    if (!all.ok()) return all.status().Annotate("the node's netdevs");
    netdevs = *all;
  }
  for (const auto& ifname : netdevs) {
    auto port = RdmaPortBehind(sysfs, ifname, net_root, ib_root);
    if (!port.ok()) return port.status();
    if (!port->has_value() || (info.reach & (*port)->Reach()) != 0) continue;
    const RdmaPort& p = **port;
    const std::string transport = ReachText(p.Reach());  // "RoCE RDMA", "InfiniBand RDMA"
    return FailedPrecondition(
        std::string(info.name) + " on " + ifname + " reaches " + ReachText(info.reach) + " only; " +
        ifname + " is the netdev of " + p.device + " port " + std::to_string(p.port) + " (" +
        p.link_layer + ") and the workload moves its data over " + transport +
        ", which tc and netfilter never see: the job would not feel this fault. Kinds that reach " +
        transport + ": " + KindsReaching(p.Reach()) +
        " (or workload.transport: tcp if the job really uses TCP there)");
  }
  return Status::Ok();
}

}  // namespace fdrill

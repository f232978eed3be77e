#include "agents/mgmt_guard.h"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/core/ipv4.h"
#include "common/host/iproute_net_stack.h"

namespace fdrill {

namespace {

constexpr auto kCacheFor = std::chrono::seconds(10);

bool AnyAddress(const std::string& a) { return a.empty() || a == "0.0.0.0" || a == "::"; }

// A string in `params`, lists included, that names one of `addresses` or
// an IPv4 prefix holding one ("0.0.0.0/0", "198.19.0.0/24"): {the string,
// the address it holds}; {"", ""} when none does. An address that is not
// IPv4 is matched as written.
std::pair<std::string, std::string> NamedAddress(const Json& params,
                                                 const std::vector<std::string>& addresses) {
  if (params.is_string()) {
    const std::string v = params.get<std::string>();
    const std::string bare = v.substr(0, v.find('/'));  // "198.18.0.1" or "198.18.0.1/32"
    for (const std::string& a : addresses) {
      if (a == bare) return {v, bare};
    }
    if (auto prefix = ParseIpv4Prefix(v)) {
      for (const std::string& a : addresses) {
        auto one = ParseIpv4Prefix(a);
        if (one && prefix->Contains(one->addr)) return {v, a};
      }
    }
    return {"", ""};
  }
  if (params.is_array() || params.is_object()) {
    for (const Json& item : params) {
      auto hit = NamedAddress(item, addresses);
      if (!hit.first.empty()) return hit;
    }
  }
  return {"", ""};
}

}  // namespace

std::string PeerAddress(const std::string& peer) {
  const size_t colon = peer.rfind(':');
  if (colon == std::string::npos) return "";
  return peer.substr(0, colon);
}

Result<std::set<std::string>> MgmtGuard::Guarded(const std::string& controller_address, Host host) {
  std::set<std::string> out = {"lo"};
  if (!mgmt_.empty()) out.insert(mgmt_);
  if (host.runner == nullptr && host.net == nullptr) return out;  // nothing to route
  auto it = cache_.find(controller_address);
  if (it != cache_.end() && clock_.Now() - it->second.at < kCacheFor) return it->second.ifaces;
  NetOf net(host);
  if (!controller_address.empty()) {
    auto dev = net->RouteDevice(controller_address);
    if (!dev.ok())
      return dev.status().Annotate("which interface carries the path to the controller " +
                                   controller_address);
    out.insert(*dev);
  }
  if (!AnyAddress(listen_)) {
    auto devs = net->AddressDevices(listen_);
    if (!devs.ok())
      return devs.status().Annotate("which interface holds the listen address " + listen_);
    out.insert(devs->begin(), devs->end());
  }
  cache_[controller_address] = {out, clock_.Now()};
  return out;
}

Status MgmtGuard::Admit(const std::string& kind, const Json& params, const std::string& target,
                        const std::string& controller_address, Host host) {
  std::vector<std::string> addresses;  // the controller's first: what a message names
  if (!controller_address.empty()) addresses.push_back(controller_address);
  if (!AnyAddress(listen_)) addresses.push_back(listen_);
  if (auto [named, held] = NamedAddress(params, addresses); !named.empty()) {
    const char* whose = held == controller_address ? "controller's" : "agent's own listen";
    return PermissionDenied(
        named.substr(0, named.find('/')) == held
            ? fmt::format("{} refused: its params name {}, the {} address; it would cut this "
                          "agent off from its controller",
                          kind, held, whose)
            : fmt::format("{} refused: its params name {}, a prefix that holds {}, the {} "
                          "address; it would cut this agent off from its controller",
                          kind, named, held, whose));
  }
  auto guarded = Guarded(controller_address, host);
  if (!guarded.ok())
    return PermissionDenied(kind + " " + target + " refused: " + guarded.status().message());
  if (guarded->count(target)) {
    return PermissionDenied(fmt::format(
        "{} {} refused: {} carries this agent's management path ({} guarded: {}); faulting it "
        "would cut the controller off",
        kind, target, target,
        controller_address.empty() ? "by name" : "route to " + controller_address,
        fmt::join(*guarded, ", ")));
  }
  // An IB port: its IPoIB netdevs.
  if (host.sysfs != nullptr && target.find('/') != std::string::npos) {
    const std::string dev = target.substr(0, target.find('/'));
    auto netdevs = host.sysfs->List("/sys/class/infiniband/" + dev + "/device/net");
    if (netdevs.ok()) {
      for (const std::string& nd : *netdevs) {
        if (guarded->count(nd)) {
          return PermissionDenied(fmt::format(
              "{} {} refused: the port carries {} (IPoIB), this agent's management path", kind,
              target, nd));
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace fdrill

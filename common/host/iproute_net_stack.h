// NetStack over iproute2's tools on a ProcessRunner: `ip -j link show`,
// `ip -j neigh show dev IF`, `tc -j qdisc|class|filter show dev IF`,
// `tc -s -j qdisc show`, and each NetChange's Argv. For hosts without netlink: the tests' recording
// fakes (tests/fakes/fake_net.h) and the fake machine (agents/fake_host.h). iproute2 6.1 prints htb
// classes as text even with -j ("class htb fd1:1 root prio 0 rate 100Mbit ceil ..."), rates in
// powers of 1000.
#pragma once

#include "common/host/host.h"
#include "common/host/net_stack.h"

namespace fdrill {

class IprouteNetStack final : public NetStack {
 public:
  explicit IprouteNetStack(ProcessRunner* runner) : runner_(runner) {}

  Result<std::vector<LinkState>> Links() override;
  Result<std::vector<Qdisc>> Qdiscs(const std::string& ifname) override;
  Result<std::vector<HtbClass>> HtbClasses(const std::string& ifname) override;
  Result<std::vector<U32Filter>> U32Filters(const std::string& ifname) override;
  Result<std::vector<RootQdiscCounters>> RootCounters() override;
  Result<std::string> RouteDevice(const std::string& address) override;
  Result<std::vector<std::string>> AddressDevices(const std::string& address) override;
  Result<std::vector<Neighbour>> Neighbours(const std::string& ifname) override;
  Status Apply(const NetChange& change) override;

 private:
  ProcessRunner* runner_;
};

// The host's network stack: `net` (host.net), or iproute2's tools on the
// runner when the host offers no netlink. Lives as long as the calls made
// through it; not copyable (it may point into itself).
class NetOf {
 public:
  NetOf(NetStack* net, ProcessRunner* runner) : iproute_(runner), net_(net ? net : &iproute_) {}
  explicit NetOf(const Host& host) : NetOf(host.net, host.runner) {}
  NetOf(const NetOf&) = delete;
  NetOf& operator=(const NetOf&) = delete;
  NetStack& operator*() { return *net_; }
  NetStack* operator->() { return net_; }

 private:
  IprouteNetStack iproute_;
  NetStack* net_;
};

// "100Mbit" -> 1e8 (tc's powers of 1000); -1 when unreadable.
double ParseTcRate(const std::string& text);

}  // namespace fdrill

// switch_down: a whole switch of the emulated fabric down — a leaf or spine
// losing power — for the fault's whole window. Run by that switch's agent.
//
// Mechanism: every port of the switch's bridge (the links `ip -j link show`
// gives that master: the swp*, up0 and dn* veths, never mgmt0, which is on
// no bridge)
// is taken administratively down with `ip link set dev PORT down`, so every
// cable's far end (a node's fab*, the spine's dn*, a leaf's up0) reads
// NO-CARRIER, as behind a switch without power. The bridge itself stays up.
// Capture records the ports and refuses a switch with a port already down
// (its "up" afterwards would not be a restore) or with no port at all.
// Verify reads IFF_UP of each port: in force means all down. Revert brings up
// each recorded port that is down, so it is safe after a failed or partial
// Apply and safe twice; a port that has vanished has nothing to revert.
// Target() is the bridge: a switch agent allows it (fabric_up.cc AgentArgv).
#include <algorithm>

#include "injectors/injector.h"
#include "injectors/netdev.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

class SwitchDown final : public Fault {
 public:
  SwitchDown(Host host, std::string bridge) : host_(host), bridge_(std::move(bridge)) {}

  Status Capture() override {
    NetOf net(host_);
    if (auto bridge = ReadLink(*net, bridge_); !bridge.ok()) return bridge.status().Annotate(Who());
    auto ports = Ports();
    if (!ports.ok()) return ports.status();
    if (ports->empty()) return FailedPrecondition(Who() + ": the bridge has no ports");
    ports_.clear();
    for (const auto& p : *ports) {
      if (!p.admin_up) {
        return FailedPrecondition(Who() + ": port " + p.name + " is already administratively down");
      }
      ports_.push_back(p.name);
    }
    return Status::Ok();
  }

  Json Saved() const override { return {{"ports", ports_}}; }
  Status Load(const Json& saved) override {
    ports_ = saved.value("ports", std::vector<std::string>{});
    return Status::Ok();
  }

  Status Apply() override {
    NetOf net(host_);
    for (const auto& port : ports_) {
      if (auto s = net->Apply(NetChange::LinkUp(port, false)); !s.ok()) return s.Annotate(Who());
    }
    return Status::Ok();
  }

  Status Verify() override { return Expect(false, "the fault in force"); }

  Status Revert() override {
    NetOf net(host_);
    auto links = ListLinks(*net);
    if (!links.ok()) return links.status().Annotate(Who());
    for (const auto& port : ports_) {
      auto it = std::find_if(links->begin(), links->end(),
                             [&](const LinkState& l) { return l.name == port; });
      if (it == links->end() || it->admin_up) continue;  // gone, or never taken down
      if (auto s = net->Apply(NetChange::LinkUp(port, true)); !s.ok()) return s.Annotate(Who());
    }
    return Status::Ok();
  }

  Status VerifyReverted() override { return Expect(true, "as found"); }

  std::string Target() const override { return bridge_; }
  std::vector<std::string> Mechanism() const override {
    return {"apply: ip link set dev PORT down, for every port of " + bridge_ +
                " (the links ip -j link show gives master " + bridge_ + ")",
            "revert: ip link set dev PORT up, for each of them"};
  }

 private:
  std::string Who() const { return "switch_down " + bridge_; }

  // The bridge's ports: the links whose master it is.
  Result<std::vector<LinkState>> Ports() const {
    NetOf net(host_);
    auto links = ListLinks(*net);
    if (!links.ok()) return links.status().Annotate(Who());
    std::vector<LinkState> out;
    for (auto& l : *links) {
      if (l.master == bridge_) out.push_back(std::move(l));
    }
    return out;
  }

  // Every recorded port's IFF_UP is `up`.
  Status Expect(bool up, const std::string& why) {
    NetOf net(host_);
    auto links = ListLinks(*net);
    if (!links.ok()) return links.status().Annotate(Who());
    for (const auto& port : ports_) {
      auto it = std::find_if(links->begin(), links->end(),
                             [&](const LinkState& l) { return l.name == port; });
      if (it == links->end()) return NotFound(Who() + ": port " + port + " is gone");
      if (it->admin_up != up) {
        return FailedPrecondition(Who() + ": port " + port + " is " +
                                  (it->admin_up ? "up" : "down") + ", expected " +
                                  (up ? "up" : "down") + " (" + why + ")");
      }
    }
    return Status::Ok();
  }

  Host host_;
  std::string bridge_;
  std::vector<std::string> ports_;  // as Capture found them, all up
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeSwitchDown(const Json& params, Host host) {
  ParamReader p(params);
  auto bridge = p.String("bridge", "br0");
  if (!bridge.ok()) return bridge.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<SwitchDown>(host, *bridge));
}

}  // namespace fdrill

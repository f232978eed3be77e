// link_down: takes an interface administratively down for the fault's whole
// window; the agent's revert at the window's end brings it up.
//
// Mechanism: `ip link set dev IF down` (IFF_UP), as link_flap's down half;
// on the emulated fabric the veth peer shows NO-CARRIER, like a switch port
// whose cable was pulled. Capture records the prior admin state through
// netdev.h's ReadLink and refuses a link already down (taking a dead link
// down proves nothing, and "up" would not be a restore). Verify reads IFF_UP
// from `ip -j link`: in force means down. Revert runs `ip link set dev IF
// up` only while the link is down, so it is safe after a failed Apply and
// safe twice; a vanished interface has nothing left to revert.
#include "injectors/injector.h"
#include "injectors/netdev.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

class LinkDown final : public Fault {
 public:
  LinkDown(Host host, std::string ifname) : host_(host), link_("link_down", std::move(ifname)) {}

  Status Capture() override { return link_.Capture(*host_.runner); }
  Json Saved() const override { return link_.Saved(); }
  Status Load(const Json& saved) override {
    link_.Load(saved);
    return Status::Ok();
  }
  Status Apply() override { return link_.Set(*host_.runner, false); }
  Status Verify() override { return link_.Expect(*host_.runner, false, "the fault in force"); }
  Status Revert() override { return link_.Restore(*host_.runner); }
  Status VerifyReverted() override { return link_.VerifyRestored(*host_.runner); }

  std::string Target() const override { return link_.ifname(); }
  std::vector<std::string> Mechanism() const override {
    return {"apply: " + JoinArgv(link_.Argv(false)), "revert: " + JoinArgv(link_.Argv(true))};
  }

 private:
  Host host_;
  AdminLink link_;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeLinkDown(const Json& params, Host host) {
  ParamReader p(params);
  auto ifname = p.String("interface");
  if (!ifname.ok()) return ifname.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<LinkDown>(host, *ifname));
}

Status ProbeLinkDown(const Json& params, Host host) { return ProbeLinkFlap(params, host); }

}  // namespace fdrill

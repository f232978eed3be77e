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
  LinkDown(Host host, std::string ifname) : host_(host), ifname_(std::move(ifname)) {}

  Status Capture() override {
    auto link = ReadLink(*host_.runner, ifname_);
    if (!link.ok()) return link.status().Annotate("link_down");
    if (!link->admin_up) {
      return FailedPrecondition("link_down " + ifname_ + ": the link is already administratively down");
    }
    prior_up_ = true;
    return Status::Ok();
  }

  Json Saved() const override { return {{"prior_up", prior_up_}}; }
  Status Load(const Json& saved) override {
    prior_up_ = saved.value("prior_up", true);
    return Status::Ok();
  }

  Status Apply() override { return Set(false); }

  Status Verify() override { return Expect(false, "the fault in force"); }

  Status Revert() override {
    if (!prior_up_) return Status::Ok();
    auto link = ReadLink(*host_.runner, ifname_);
    if (!link.ok()) return link.status().code() == StatusCode::kNotFound ? Status::Ok() : link.status();
    return link->admin_up ? Status::Ok() : Set(true);
  }

  Status VerifyReverted() override { return Expect(prior_up_, "as found"); }

  std::string Target() const override { return ifname_; }
  std::vector<std::string> Mechanism() const override {
    return {"apply: " + JoinArgv(Argv(false)), "revert: " + JoinArgv(Argv(true))};
  }

 private:
  std::vector<std::string> Argv(bool up) const { return {"ip", "link", "set", "dev", ifname_, up ? "up" : "down"}; }

  Status Set(bool up) {
    auto r = RunChecked(*host_.runner, Argv(up));
    return r.ok() ? Status::Ok() : r.status().Annotate("link_down " + ifname_);
  }

  Status Expect(bool up, const char* why) {
    auto link = ReadLink(*host_.runner, ifname_);
    if (!link.ok()) return link.status().Annotate("link_down");
    if (link->admin_up != up) {
      return FailedPrecondition("link_down " + ifname_ + ": link is " + (link->admin_up ? "up" : "down") +
                                ", expected " + (up ? "up" : "down") + " (" + why + ")");
    }
    return Status::Ok();
  }

  Host host_;
  std::string ifname_;
  bool prior_up_ = true;
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

// link_flap: takes an interface administratively down for `down`, then up
// again, `count` times, one flap starting every `period`.
//
// Mechanism: `ip link set dev IF down|up` (IFF_UP). On the emulated fabric the
// veth peer then shows NO-CARRIER, as a switch port does when a cable is
// pulled. Capture records the prior admin state and refuses a link that is
// already down (a flap of a dead link proves nothing, and "up" would not be a
// restore). Tick(t) sets the whole state for time t since Apply, so a late or
// repeated tick is harmless. Verify reads the IFF_UP flag from `ip -j link`:
// active means down while inside a down window. Revert sets the link up again
// (the captured prior state); safe after a failed Apply and safe twice.
#include "injectors/injector.h"
#include "injectors/netdev.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

class LinkFlap final : public Fault {
 public:
  LinkFlap(Host host, std::string ifname, Duration down, int64_t count, Duration period)
      : host_(host), ifname_(std::move(ifname)), down_(down), count_(count), period_(period) {}

  Status Capture() override {
    auto link = ReadLink(*host_.runner, ifname_);
    if (!link.ok()) return link.status().Annotate("link_flap");
    if (!link->admin_up) {
      return FailedPrecondition("link_flap " + ifname_ + ": the link is already administratively down");
    }
    prior_up_ = true;
    return Status::Ok();
  }

  Json Saved() const override { return {{"prior_up", prior_up_}}; }
  Status Load(const Json& saved) override {
    prior_up_ = saved.value("prior_up", true);
    return Status::Ok();
  }

  Status Apply() override { return SetUp(false); }

  Status Tick(Duration t) override { return SetUp(!WantDown(t)); }

  bool Finished(Duration t) const override { return t >= (count_ - 1) * period_ + down_; }

  Status Verify() override {
    auto link = ReadLink(*host_.runner, ifname_);
    if (!link.ok()) return link.status();
    if (link->admin_up != set_up_) {
      return FailedPrecondition("link_flap " + ifname_ + ": link is " + (link->admin_up ? "up" : "down") +
                                ", expected " + (set_up_ ? "up" : "down"));
    }
    return Status::Ok();
  }

  Status Revert() override {
    if (!prior_up_) return Status::Ok();
    auto link = ReadLink(*host_.runner, ifname_);
    if (!link.ok()) return link.status().code() == StatusCode::kNotFound ? Status::Ok() : link.status();
    if (link->admin_up) {
      set_up_ = true;
      return Status::Ok();
    }
    return SetUp(true, /*force=*/true);
  }

  Status VerifyReverted() override {
    auto link = ReadLink(*host_.runner, ifname_);
    if (!link.ok()) return link.status();
    if (link->admin_up != prior_up_) {
      return FailedPrecondition("link_flap " + ifname_ + ": link is " + (link->admin_up ? "up" : "down") +
                                ", expected it " + (prior_up_ ? "up" : "down") + " as found");
    }
    return Status::Ok();
  }

  std::string Target() const override { return ifname_; }
  std::vector<std::string> Mechanism() const override {
    std::string times = count_ == 1 ? "once" : std::to_string(count_) + " times, every " + FormatDuration(period_);
    return {"apply: " + JoinArgv(Argv(false)) + ", then after " + FormatDuration(down_) + ": " + JoinArgv(Argv(true)) +
                " (" + times + ")",
            "revert: " + JoinArgv(Argv(true))};
  }

 private:
  bool WantDown(Duration t) const {
    if (t < Duration::zero()) return false;
    int64_t cycle = t / period_;
    if (cycle >= count_) return false;
    return t - cycle * period_ < down_;
  }

  std::vector<std::string> Argv(bool up) const { return {"ip", "link", "set", "dev", ifname_, up ? "up" : "down"}; }

  Status SetUp(bool up, bool force = false) {
    if (!force && applied_once_ && set_up_ == up) return Status::Ok();
    auto r = RunChecked(*host_.runner, Argv(up));
    if (!r.ok()) return r.status().Annotate("link_flap " + ifname_);
    applied_once_ = true;
    set_up_ = up;
    return Status::Ok();
  }

  Host host_;
  std::string ifname_;
  Duration down_;
  int64_t count_;
  Duration period_;
  bool prior_up_ = true;
  bool set_up_ = true;        // what we last set
  bool applied_once_ = false;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeLinkFlap(const Json& params, Host host) {
  ParamReader p(params);
  auto ifname = p.String("interface");
  if (!ifname.ok()) return ifname.status();
  auto down = p.Dur("down");
  if (!down.ok()) return down.status();
  auto count = p.Int("count", 1, 1, 1000);
  if (!count.ok()) return count.status();
  auto period = p.Dur("period", *down * 2);
  if (!period.ok()) return period.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  if (*count > 1 && *period <= *down) {
    return InvalidArgument("params.period: must be longer than params.down (" + FormatDuration(*down) +
                           ") so the link comes up between flaps");
  }
  return std::unique_ptr<Fault>(std::make_unique<LinkFlap>(host, *ifname, *down, *count, *period));
}

}  // namespace fdrill

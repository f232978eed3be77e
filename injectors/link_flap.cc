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
      : host_(host),
        link_("link_flap", std::move(ifname)),
        down_(down),
        count_(count),
        period_(period) {}

  Status Capture() override { return link_.Capture(*host_.runner); }
  Json Saved() const override { return link_.Saved(); }
  Status Load(const Json& saved) override {
    link_.Load(saved);
    return Status::Ok();
  }

  Status Apply() override { return SetUp(false); }

  Status Tick(Duration t) override { return SetUp(!WantDown(t)); }

  bool Finished(Duration t) const override { return t >= (count_ - 1) * period_ + down_; }

  Status Verify() override { return link_.Expect(*host_.runner, set_up_, "where the flap is now"); }

  Status Revert() override {
    Status s = link_.Restore(*host_.runner);
    if (s.ok()) set_up_ = true;
    return s;
  }

  Status VerifyReverted() override { return link_.VerifyRestored(*host_.runner); }

  std::string Target() const override { return link_.ifname(); }
  std::vector<std::string> Mechanism() const override {
    std::string times =
        count_ == 1 ? "once" : std::to_string(count_) + " times, every " + FormatDuration(period_);
    return {"apply: " + JoinArgv(link_.Argv(false)) + ", then after " + FormatDuration(down_) +
                ": " + JoinArgv(link_.Argv(true)) + " (" + times + ")",
            "revert: " + JoinArgv(link_.Argv(true))};
  }

 private:
  bool WantDown(Duration t) const {
    if (t < Duration::zero()) return false;
    int64_t cycle = t / period_;
    if (cycle >= count_) return false;
    return t - cycle * period_ < down_;
  }

  // Sets the whole state for now; a repeat of the last state runs nothing.
  Status SetUp(bool up) {
    if (applied_once_ && set_up_ == up) return Status::Ok();
    if (auto s = link_.Set(*host_.runner, up); !s.ok()) return s;
    applied_once_ = true;
    set_up_ = up;
    return Status::Ok();
  }

  Host host_;
  AdminLink link_;
  Duration down_;
  int64_t count_;
  Duration period_;
  bool set_up_ = true;  // what we last set
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
    return InvalidArgument("params.period: must be longer than params.down (" +
                           FormatDuration(*down) + ") so the link comes up between flaps");
  }
  return std::unique_ptr<Fault>(std::make_unique<LinkFlap>(host, *ifname, *down, *count, *period));
}

}  // namespace fdrill

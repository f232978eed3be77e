// ib_port_flap: disables a local InfiniBand HCA port for `down`, then enables
// it, `count` times, one flap starting every `period`: a flapping cable.
//
// Mechanism: `ibportstate -C DEV -P PORT LID PORT disable`, then `... enable`
// (PortPhysicalState Disabled, then Polling: the link retrains and the subnet
// manager brings it back to ACTIVE, fault-mechanisms §1.5). Tick(t) sets the
// whole state for time t since Apply, as link_flap does, so a late or
// repeated tick is harmless. Verify reads sysfs phys_state: inside a down
// window "3: Disabled", outside it anything else. Capture refuses a port
// already Disabled and records the LID (params.lid, else sysfs). Revert
// enables only while the port is Disabled, so it is safe after a failed
// Apply and safe twice. NCCL logs port errors as warnings and fails in-flight
// work only after its IB retry budget (~30 s by default), so a flap shorter
// than that is a stall, not an error (§5.2, §5.26).
#include "injectors/ib_port_fault.h"

namespace fdrill {

namespace {

class IbPortFlap final : public Fault {
 public:
  IbPortFlap(Host host, IbPort port, FlapSchedule schedule)
      : toggle_(host, std::move(port), "ib_port_flap"), schedule_(schedule) {}

  Status Capture() override { return toggle_.Capture(); }
  Json Saved() const override { return toggle_.Saved(); }
  Status Load(const Json& saved) override {
    toggle_.Load(saved);
    return Status::Ok();
  }
  Status Apply() override { return SetDisabled(true); }
  Status Tick(Duration t) override { return SetDisabled(schedule_.WantDown(t)); }
  bool Finished(Duration t) const override { return schedule_.Finished(t); }
  Status Verify() override { return toggle_.Expect(disabled_); }
  Status Revert() override {
    Status s = toggle_.Revert();
    if (s.ok()) disabled_ = false;
    return s;
  }
  Status VerifyReverted() override { return toggle_.VerifyReverted(); }
  std::string Target() const override { return toggle_.port().Name(); }
  std::vector<std::string> Mechanism() const override {
    return {"apply: " + JoinArgv(toggle_.Argv(false)) + ", then after " +
                FormatDuration(schedule_.down) + ": " + JoinArgv(toggle_.Argv(true)) + " (" +
                schedule_.Describe() + ")",
            "revert: " + JoinArgv(toggle_.Argv(true))};
  }

 private:
  Status SetDisabled(bool disabled) {
    if (applied_once_ && disabled_ == disabled) return Status::Ok();
    if (auto s = toggle_.Set(!disabled); !s.ok()) return s;
    applied_once_ = true;
    disabled_ = disabled;
    return Status::Ok();
  }

  IbPortToggle toggle_;
  FlapSchedule schedule_;
  bool disabled_ = false;  // what we last set
  bool applied_once_ = false;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeIbPortFlap(const Json& params, Host host) {
  ParamReader p(params);
  auto port = ReadIbPortParams(p, params);
  if (!port.ok()) return port.status();
  auto schedule = ReadFlapSchedule(p);
  if (!schedule.ok()) return schedule.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<IbPortFlap>(host, std::move(*port), *schedule));
}

}  // namespace fdrill

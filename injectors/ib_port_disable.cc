// ib_port_disable: disables a local InfiniBand HCA port for the fault's whole
// window; the agent's revert at the window's end enables it again.
//
// Mechanism: `ibportstate -C DEV -P PORT LID PORT disable`, which writes
// PortInfo.PortPhysicalState=Disabled on the local port (no subnet manager
// needed); revert is `... enable` (Polling), after which the link retrains
// and the subnet manager brings it back to ACTIVE (fault-mechanisms §1.5).
// LID: params.lid, else sysfs ports/PORT/lid, recorded at Capture so a
// journal replay addresses the same port. Capture refuses a port already
// Disabled. Verify reads sysfs phys_state ("3: Disabled"): the device's
// state, not our intent. Revert enables only while the port is Disabled, so
// it is safe after a failed Apply and safe twice; VerifyReverted waits for
// the logical state Capture saw (usually "4: ACTIVE").
// Disable a local port only: disabling a remote port over the only path to
// it cannot be undone over that path (ibportstate: "Disable may be
// irreversible").
#include "injectors/ib_port_fault.h"

namespace fdrill {

namespace {

class IbPortDisable final : public Fault {
 public:
  IbPortDisable(Host host, IbPort port) : toggle_(host, std::move(port), "ib_port_disable") {}

  Status Capture() override { return toggle_.Capture(); }
  Json Saved() const override { return toggle_.Saved(); }
  Status Load(const Json& saved) override {
    toggle_.Load(saved);
    return Status::Ok();
  }
  Status Apply() override { return toggle_.Set(false); }
  Status Verify() override { return toggle_.Expect(true); }
  Status Revert() override { return toggle_.Revert(); }
  Status VerifyReverted() override { return toggle_.VerifyReverted(); }
  std::string Target() const override { return toggle_.port().Name(); }
  std::vector<std::string> Mechanism() const override {
    return {"apply: " + JoinArgv(toggle_.Argv(false)), "revert: " + JoinArgv(toggle_.Argv(true))};
  }

 private:
  IbPortToggle toggle_;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeIbPortDisable(const Json& params, Host host) {
  ParamReader p(params);
  auto port = ReadIbPortParams(p, params);
  if (!port.ok()) return port.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<IbPortDisable>(host, std::move(*port)));
}

}  // namespace fdrill

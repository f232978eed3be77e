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
// The Fault is toggle_fault.h's OffFault over ib_port_fault.h's IbPortToggle.
#include "injectors/ib_port_fault.h"

namespace fdrill {

Result<std::unique_ptr<Fault>> MakeIbPortDisable(const Json& params, Host host) {
  ParamReader p(params);
  auto port = ReadIbPortParams(p, params);
  if (!port.ok()) return port.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<OffFault>(
      std::make_unique<IbPortToggle>(host, std::move(*port), "ib_port_disable")));
}

}  // namespace fdrill

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
// The Fault is toggle_fault.h's FlapFault over ib_port_fault.h's IbPortToggle.
#include "injectors/ib_port_fault.h"

namespace fdrill {

Result<std::unique_ptr<Fault>> MakeIbPortFlap(const Json& params, Host host) {
  ParamReader p(params);
  auto port = ReadIbPortParams(p, params);
  if (!port.ok()) return port.status();
  auto schedule = ReadFlapSchedule(p);
  if (!schedule.ok()) return schedule.status();
  if (auto s = schedule->Check("port"); !s.ok()) return s;
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<FlapFault>(
      std::make_unique<IbPortToggle>(host, std::move(*port), "ib_port_flap"), *schedule));
}

}  // namespace fdrill

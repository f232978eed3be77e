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
// safe twice; a vanished interface has nothing left to revert. The down
// flushes the interface's neighbour entries, PERMANENT ones too: Capture
// snapshots them and the revert re-adds them right after the up
// (link_neighbours.h), so the node is left as found.
// The Fault is toggle_fault.h's OffFault over netdev.h's AdminLink.
#include "injectors/injector.h"
#include "injectors/netdev.h"
#include "injectors/params.h"
#include "injectors/toggle_fault.h"

namespace fdrill {

Result<std::unique_ptr<Fault>> MakeLinkDown(const Json& params, Host host) {
  ParamReader p(params);
  auto ifname = p.String("interface");
  if (!ifname.ok()) return ifname.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(
      std::make_unique<OffFault>(std::make_unique<AdminLink>(host, "link_down", *ifname)));
}

}  // namespace fdrill

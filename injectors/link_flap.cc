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
// Kernel fact: each down flushes the interface's neighbour (ARP/NDP) entries,
// PERMANENT ones too. Without them the first packet after an up waits for
// ARP, and a lost request is retried only after retrans_time (1 s): a 100 ms
// flap measured ~1.1 s on the wire for 5 flaps in 20 (bench/agent_bench.sh).
// So Capture snapshots them and every up edge re-adds them right after the
// up, PERMANENT as PERMANENT, the rest as STALE (link_neighbours.h).
// The Fault is toggle_fault.h's FlapFault over netdev.h's AdminLink.
#include "injectors/injector.h"
#include "injectors/netdev.h"
#include "injectors/params.h"
#include "injectors/toggle_fault.h"

namespace fdrill {

Result<std::unique_ptr<Fault>> MakeLinkFlap(const Json& params, Host host) {
  ParamReader p(params);
  auto ifname = p.String("interface");
  if (!ifname.ok()) return ifname.status();
  auto schedule = ReadFlapSchedule(p);
  if (!schedule.ok()) return schedule.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  if (auto s = schedule->Check("link"); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<FlapFault>(
      std::make_unique<AdminLink>(host, "link_flap", *ifname), *schedule));
}

}  // namespace fdrill

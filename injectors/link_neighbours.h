// LinkNeighbours: an interface's neighbour (ARP / NDP) entries, kept across
// an administrative down so AdminLink (netdev.h) can put them back on the up
// edge.
//
// Kernel fact: `ip link set dev IF down` flushes the interface's neighbour
// entries, PERMANENT ones included (NETDEV_DOWN: arp_ifdown / ndisc's
// neigh_ifdown; a carrier loss flushes only the dynamic ones,
// neigh_carrier_down). After the up, the first packet to a neighbour waits
// for resolution, and on a veth the ARP request or reply races the peer's
// qdisc activation (linkwatch runs it later; noop_qdisc drops until then):
// a lost one is retried only after retrans_time, 1 s. bench/agent_bench.sh
// measured a 100 ms link_flap as ~1,100 ms on the wire for 5 flaps in 20.
// And an operator's PERMANENT entries would be gone after the revert: the
// node not left as found.
//
// So Capture snapshots the entries; ReAdd, right after an up in the same
// call, puts PERMANENT ones back as PERMANENT and the kernel's own as STALE
// (used at once, re-confirmed by the kernel itself: STALE -> DELAY ->
// PROBE), so the up edge has no resolution on its path. Not thread-safe;
// the AdminLink that owns it is driven by one thread.
#pragma once

#include <string>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/host/net_stack.h"

namespace fdrill {

class LinkNeighbours {
 public:
  // Reads the interface's entries (NetStack::Neighbours); touches nothing.
  Status Capture(NetStack& net, const std::string& ifname);
  // [{"dst", "lladdr", "state"}], for the journal.
  Json Saved() const;
  // Saved()'s array; anything else (a journal written before neighbours
  // were kept: absent, null) holds none. Entries missing a field are skipped.
  void Load(const Json& saved);

  // Re-adds every entry (NetChange::NeighReplace), all of them tried. An
  // error names the PERMANENT entries that failed; a dynamic one that fails
  // is left to the kernel, which resolves it as it would have anyway.
  Status ReAdd(NetStack& net, const std::string& ifname) const;
  // Re-adds only the PERMANENT entries the interface lacks (a Restore that
  // finds the link up already); changes nothing when all are there.
  Status ReAddMissingPermanent(NetStack& net, const std::string& ifname) const;
  // FailedPrecondition naming the PERMANENT entries the interface lacks.
  Status ExpectPermanent(NetStack& net, const std::string& ifname) const;

  const std::vector<Neighbour>& entries() const { return entries_; }

 private:
  // The PERMANENT entries of entries_ the interface lacks now (same dst,
  // lladdr, PERMANENT); with none kept, none and no read.
  Result<std::vector<Neighbour>> MissingPermanent(NetStack& net, const std::string& ifname) const;

  std::vector<Neighbour> entries_;
};

}  // namespace fdrill

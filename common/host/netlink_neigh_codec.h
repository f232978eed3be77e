// The rtnetlink messages of an interface's neighbour entries (net_stack.h's
// Neighbour and NetChange::NeighReplace), as iproute2's ip/ipneigh.c sends
// them; the codec under NetlinkNetStack::Neighbours and its Apply.
//
// A dump is RTM_GETNEIGH with an ndmsg of family AF_UNSPEC (the ARP and the
// NDP table both) and an NDA_IFINDEX attribute, which the kernel filters on
// (neighbour.c neigh_valid_dump_req; the ndmsg's own ifindex is not read). A
// replace is RTM_NEWNEIGH with NLM_F_CREATE | NLM_F_REPLACE, ndm_state
// NUD_PERMANENT or NUD_STALE, NDA_DST (4 or 16 bytes, which picks the
// table) and NDA_LLADDR. A STALE entry added by hand is used at once and
// re-confirmed by the kernel itself (neigh_event_send: STALE -> DELAY ->
// PROBE), so a packet to it needs no resolution first.
#pragma once

#include <optional>
#include <string>

#include "common/core/result.h"
#include "common/host/net_stack.h"
#include "common/host/rtnl_socket.h"

namespace fdrill {

NlMessage NeighDumpRequest(int ifindex);
// The request for a NetChange::NeighReplace on interface `ifindex`;
// InvalidArgument for an address or lladdr that does not parse.
Result<NlMessage> EncodeNeighReplace(const NetChange& change, int ifindex);
// One dumped RTM_NEWNEIGH payload as a Neighbour; nullopt for an entry of
// another interface or family, without a link-layer address, or in a state
// that holds none (INCOMPLETE, FAILED, NOARP, NONE).
std::optional<Neighbour> DecodeNeighbour(const std::string& payload, int ifindex);

}  // namespace fdrill

// EgressLoss: link_loss's egress mechanism — a random share of what an
// interface sends is lost *after* the sender's stack has handed it over, as
// on a lossy cable, so TCP sees wire loss (it retransmits, and counts it)
// rather than a local send error.
//
// Why not iptables: a packet dropped in OUTPUT/POSTROUTING, by a qdisc or by
// a tc or nftables egress `drop` comes back to TCP as a failed transmit
// (NET_XMIT_DROP / -EPERM): TCP enters CWR and sends the segment again later
// without counting a retransmission. Measured here on a rate-limited veth,
// 10 % loss on 26 MB: iptables OUTPUT DROP +0..4 RetransSegs, nftables egress
// drop +0; the mechanism below +2,146..2,505, the same as loss on the wire.
//
// Mechanism (Linux >= 5.16, nftables >= 1.0.1): a table of the fault's own,
// `netdev fdrill_loss_<8 hex>`, whose base chain `egress` (type filter hook
// egress device IF) holds one rule
//   [ip daddr PEER] [numgen random mod 100000000 lt P] counter fwd to HOLE
// HOLE is a veth of the fault's own, `fdrill<8 hex>`, up, whose peer
// `fdrill<8 hex>p` stays down: a frame forwarded to it is consumed (the hook
// returns NF_STOLEN, so the sender sees success) and counted as HOLE's
// tx_dropped. The 8 hex digits are FaultChainName's hash of kind and params,
// so a journal replay finds the same objects. Capture checks the interface
// exists and that neither the table nor HOLE does. Verify reads the ruleset
// back (`nft -j list table`). Revert deletes the table, then HOLE (its peer
// goes with it), each while it exists: safe after a partial Apply and twice.
// GSO caveat as link_loss's: the hook sees super-packets of up to 64 KB.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/host/host.h"
#include "injectors/injector.h"

namespace fdrill {

struct EgressLossSpec {
  std::string ifname;               // "fab0"
  uint64_t micro_percent = 0;       // millionths of a percent; 100'000'000 drops all
  std::optional<std::string> peer;  // "198.18.0.2" or "198.18.0.0/24": only what goes there
  std::string hash;                 // 8 hex digits naming the table and HOLE
};

std::unique_ptr<Fault> MakeEgressLoss(Host host, EgressLossSpec spec);

}  // namespace fdrill

// Per link, the TCP segments this node retransmitted through it:
// "<if>.tcp_retrans_segs", cumulative since the agent started, one of the
// telemetry counters (agents/counters.h). A socket belongs to the interface
// that holds its local address (a node's fab0 and fab1 are on different
// subnets; IPoIB's address is ib0's). Retransmissions are a sender's view
// of loss on its path — dropped by a netfilter rule, a switch port, a
// cable — which the sender's own netdev counters never see.
//
// The kernel counts per socket (tcp_info.tcpi_total_retrans); sockets come
// and go, so the sum over the sockets open now would fall whenever one
// closes. This keeps each socket's last count by its cookie and adds only
// what each rose by: a socket seen for the first time adds all it has
// retransmitted, one that is gone adds nothing more. Not thread-safe: the
// agent's telemetry tick owns it.
//
// The sockets are listed only when one may have retransmitted since the
// last list. A sock_diag dump walks every bucket of the kernel's TCP hash
// table (net/ipv4/inet_diag.c inet_diag_dump_icsk: 0..ehash_mask, one table
// for every network namespace; 262,144 buckets on a 24 GiB machine),
// whatever the request's state, port or bytecode filter, which only skip
// sockets once found: twice a second (IPv4, IPv6) that was a quarter of an
// idle agent's CPU (docs/performance.md). The namespace's TcpActivity
// (common/host/tcp_sockets.h) moves whenever a socket's count may have;
// while it has not moved since the last list, a list would add nothing and
// is skipped, so the totals are those of listing every sample.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/host/tcp_sockets.h"
#include "common/wire/wire.h"

namespace fdrill {

class TcpLinkRetrans {
 public:
  explicit TcpLinkRetrans(TcpSockets& sockets) : sockets_(sockets) {}

  // Adds "<if>.tcp_retrans_segs" to `out` for every interface with an
  // address but lo and `mgmt_interface` (0 until one of its sockets
  // retransmits, so the series starts with the baseline). Adds nothing when
  // the kernel cannot be asked (no sock_diag): the other counters stand.
  // The sockets are listed when TcpSockets::Activity moved since the last
  // list or cannot be read.
  void Sample(const std::string& mgmt_interface, Json& out);

 private:
  // Adds what each socket retransmitted since the last list to totals_;
  // false when the kernel could not be asked.
  bool List(const std::unordered_map<std::string, std::string>& interface_of);

  TcpSockets& sockets_;
  std::map<uint64_t, uint64_t> last_;       // socket cookie -> its total_retrans last time
  std::map<std::string, uint64_t> totals_;  // interface -> segments retransmitted
  std::optional<TcpActivity> listed_at_;    // read before the last good list
};

}  // namespace fdrill

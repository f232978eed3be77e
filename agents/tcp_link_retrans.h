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
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "harness/host/tcp_sockets.h"
#include "harness/wire/wire.h"

namespace fdrill {

class TcpLinkRetrans {
 public:
  explicit TcpLinkRetrans(TcpSockets& sockets) : sockets_(sockets) {}

  // Adds "<if>.tcp_retrans_segs" to `out` for every interface with an
  // address but lo and `mgmt_interface` (0 until one of its sockets
  // retransmits, so the series starts with the baseline). Adds nothing when
  // the kernel cannot be asked (no sock_diag): the other counters stand.
  void Sample(const std::string& mgmt_interface, Json& out);

 private:
  TcpSockets& sockets_;
  std::map<uint64_t, uint64_t> last_;       // socket cookie -> its total_retrans last time
  std::map<std::string, uint64_t> totals_;  // interface -> segments retransmitted
};

}  // namespace fdrill

// The node's TCP sockets as the kernel's sock_diag reports them — what
// `ss -tin` shows — and the addresses of its interfaces, both in the calling
// thread's network namespace (an emulated node's agent runs in the node's).
// The agent turns them into per-link retransmission counters
// (agents/tcp_link_retrans.h): segments a node had to send twice on a link
// are that link's loss, whichever layer dropped them (netfilter, a switch,
// a bad cable), which no netdev counter of the sender shows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/core/result.h"

namespace fdrill {

struct TcpSocket {
  // The kernel's socket cookie (inet_diag_sockid.idiag_cookie): unique on
  // the machine for as long as it runs, so a counter per socket can be
  // followed across samples and a closed socket told from a reset.
  uint64_t cookie = 0;
  std::string local;   // address, as inet_ntop writes it
  std::string remote;  // address
  // tcp_info.tcpi_total_retrans: segments this socket retransmitted over
  // its life (a TSO super-packet counts its segments).
  uint64_t total_retrans = 0;
};

// Counters of the namespace that move whenever some socket's total_retrans
// may have (/proc/net/snmp "Tcp:", TCP over IPv4 and IPv6 both): the kernel
// raises RetransSegs with a socket's own count, by the same segments
// (tcp_output.c __tcp_retransmit_skb, "Update global and local TCP
// statistics"; a fast-open SYN-ACK's in tcp_rtx_synack), and an accepted
// socket starts with its SYN-ACK's retransmissions (tcp_minisocks.c
// tcp_create_openreq_child: total_retrans = req->num_retrans), counted in
// RetransSegs back then and in PassiveOpens when the socket appears. While
// both stand still, no socket's count rose and no new socket starts above 0.
struct TcpActivity {
  uint64_t retrans_segs = 0;
  uint64_t passive_opens = 0;
  bool operator==(const TcpActivity&) const = default;
};

// Parses /proc/net/snmp text (a "Tcp:" line of names, then one of values).
Result<TcpActivity> ParseTcpActivity(const std::string& snmp);

struct InterfaceAddress {
  std::string interface;
  std::string address;  // as inet_ntop writes it
};

class TcpSockets {
 public:
  virtual ~TcpSockets() = default;
  // Every IPv4 and IPv6 TCP socket but listeners.
  virtual Result<std::vector<TcpSocket>> List() = 0;
  // Every IPv4 and IPv6 address of every interface (getifaddrs).
  virtual Result<std::vector<InterfaceAddress>> Addresses() = 0;
  // The namespace's TcpActivity, read without listing a socket.
  virtual Result<TcpActivity> Activity() = 0;
};

// NETLINK_SOCK_DIAG (SOCK_DIAG_BY_FAMILY, inet_diag_req_v2 asking
// INET_DIAG_INFO), getifaddrs(3) and /proc/thread-self/net/snmp (the
// calling thread's namespace, as the other two). Needs no privilege: an
// unprivileged caller sees every socket's tcp_info in its namespace too.
class RealTcpSockets final : public TcpSockets {
 public:
  Result<std::vector<TcpSocket>> List() override;
  Result<std::vector<InterfaceAddress>> Addresses() override;
  Result<TcpActivity> Activity() override;
};

}  // namespace fdrill

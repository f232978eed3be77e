// FakeTcpSockets: the sockets and addresses a test sets; `fail` makes both
// calls fail, as a kernel without sock_diag would.
#pragma once

#include <vector>

#include "harness/host/tcp_sockets.h"

namespace fdrill {

class FakeTcpSockets final : public TcpSockets {
 public:
  Result<std::vector<TcpSocket>> List() override {
    if (fail) return Internal("socket(NETLINK_SOCK_DIAG): Protocol not supported");
    return sockets;
  }
  Result<std::vector<InterfaceAddress>> Addresses() override {
    if (fail) return Internal("getifaddrs: Operation not permitted");
    return addresses;
  }

  std::vector<TcpSocket> sockets;
  std::vector<InterfaceAddress> addresses;
  bool fail = false;
};

}  // namespace fdrill

// FakeTcpSockets: the sockets, addresses and activity a test sets; `fail`
// makes the calls fail, as a kernel without sock_diag would; no `activity`
// fails Activity() alone. Counts the lists of the sockets.
#pragma once

#include <optional>
#include <vector>

#include "common/host/tcp_sockets.h"

namespace fdrill {

class FakeTcpSockets final : public TcpSockets {
 public:
  Result<std::vector<TcpSocket>> List() override {
    ++lists;
    if (fail) return Internal("socket(NETLINK_SOCK_DIAG): Protocol not supported");
    return sockets;
  }
  Result<std::vector<InterfaceAddress>> Addresses() override {
    if (fail) return Internal("getifaddrs: Operation not permitted");
    return addresses;
  }
  Result<TcpActivity> Activity() override {
    if (fail || !activity) return Internal("/proc/thread-self/net/snmp: No such file or directory");
    return *activity;
  }

  std::vector<TcpSocket> sockets;
  std::vector<InterfaceAddress> addresses;
  std::optional<TcpActivity> activity;
  bool fail = false;
  int lists = 0;  // List() calls: dumps of the kernel's TCP table
};

}  // namespace fdrill

// MgmtGuard: no fault may cut the agent off from its controller. Guarded:
//  - "lo" and the configured management interface (by name, as before);
//  - the interface the kernel routes the controller's address over
//    (`ip -j route get ADDR`), for the address of the connection asking;
//  - the interface holding the agent's own listen address (`ip -j addr show
//    to ADDR`; with `--listen 0.0.0.0` the route to the controller covers it);
//  - an InfiniBand port whose netdevs (IPoIB: /sys/class/infiniband/DEV/
//    device/net/*) include a guarded interface;
//  - any fault whose params name the controller's or the listen address, or
//    an IPv4 prefix that holds one (a link_partition whose peers include the
//    controller, or 0.0.0.0/0).
// A lookup that fails refuses (fail closed): the agent cannot show the path
// is safe. Answers are cached per controller address for 10 s (a route
// change is rare; every apply would otherwise fork `ip`).
// Single-threaded (the agent's).
#pragma once

#include <map>
#include <set>
#include <string>

#include "common/core/clock.h"
#include "common/core/json.h"
#include "common/core/result.h"
#include "common/host/host.h"

namespace fdrill {

class MgmtGuard {
 public:
  // `listen_address`: the IP the agent serves on ("" or "0.0.0.0": any).
  MgmtGuard(std::string mgmt_interface, std::string listen_address, const Clock& clock)
      : mgmt_(std::move(mgmt_interface)), listen_(std::move(listen_address)), clock_(clock) {}

  // Ok when a fault of `kind` with `params` acting on `target` leaves the
  // path to `controller_address` ("" when unknown: the names alone) intact;
  // PermissionDenied naming what it would cut otherwise.
  Status Admit(const std::string& kind, const Json& params, const std::string& target,
               const std::string& controller_address, Host host);

  // The guarded interfaces for `controller_address` (tests, messages).
  Result<std::set<std::string>> Guarded(const std::string& controller_address, Host host);

 private:
  struct Cached {
    std::set<std::string> ifaces;
    Clock::TimePoint at;
  };
  std::string mgmt_;
  std::string listen_;
  const Clock& clock_;
  std::map<std::string, Cached> cache_;
};

// "10.0.0.1" from "10.0.0.1:53122", "::1" from "::1:7100"; "" when the peer
// has no port ("test").
std::string PeerAddress(const std::string& peer);

}  // namespace fdrill

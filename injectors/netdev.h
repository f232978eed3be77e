// Observing network interfaces through iproute2's JSON output, shared by the
// network injectors and the agent's fabric snapshot.
//   `ip -j link show dev IF`      -> [{"ifname", "flags": [.. "UP" ..], "operstate"}]
//   `tc -j qdisc show dev IF root` -> [{"kind", "handle", "root": true, "options"}]
// tc reports tbf "rate" in bytes per second.
#pragma once

#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/host/host.h"
#include "harness/wire/wire.h"

namespace fdrill {

struct LinkState {
  std::string name;
  bool admin_up = false;     // IFF_UP: what `ip link set up/down` changes
  std::string operstate;     // "UP", "DOWN", "LOWERLAYERDOWN", ...
};

struct RootQdisc {
  std::string kind;          // "noqueue", "tbf", ...
  std::string handle;        // "0:", "fd1:"
  Json options = Json::object();
};

// NotFound naming the interface and listing the ones that exist.
Result<LinkState> ReadLink(ProcessRunner& runner, const std::string& ifname);
Result<RootQdisc> ReadRootQdisc(ProcessRunner& runner, const std::string& ifname);
Result<std::vector<LinkState>> ListLinks(ProcessRunner& runner);

// The qdiscs the kernel attaches by itself; removing the root qdisc brings
// one of these back, so a fault over them reverts exactly by deletion.
bool IsDefaultQdisc(const std::string& kind);

}  // namespace fdrill

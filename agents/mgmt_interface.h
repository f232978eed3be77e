// Finds the interface that holds an address (`ip -j addr show`), so the agent
// knows its management interface and refuses to fault it. The wildcard
// 0.0.0.0 (and 127.x) owns no fabric interface: returns "lo".
#pragma once

#include <string>

#include "common/core/result.h"
#include "common/host/host.h"

namespace fdrill {

Result<std::string> InterfaceOwningAddress(ProcessRunner& runner, const std::string& address);

}  // namespace fdrill

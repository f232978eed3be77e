// ConnectAll: dials many agents at once, as a drill's first step.
//
// Contract: every link is dialled (AgentLink::ConnectAsync) with at most
// `window` TCP connects and TLS handshakes in flight; each has its own
// deadline, `timeout`, from when its dial starts, so a slow or dead agent
// costs its own timeout and not everyone's. Returns when every dial has
// ended: one Status per link, in order. The links' io_context must be
// running on another thread. Names are resolved on the calling thread.
//
// Why a window and not all at once: the handshakes are CPU on both ends; with
// 10,000 started together the last would wait behind 9,999 others and run
// out of its deadline before its turn. 256 keeps every core busy on a
// controller host and a handshake's wait short.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "common/core/result.h"
#include "common/core/units.h"
#include "harness/controller/agent_link.h"

namespace fdrill {

inline constexpr size_t kConnectWindow = 256;

std::vector<Status> ConnectAll(std::span<AgentLink* const> links, Duration timeout,
                               size_t window = kConnectWindow);

}  // namespace fdrill

#include "harness/controller/panic.h"

#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>

#include "common/tls/tls_config.h"
#include "common/wire/protocol.h"
#include "harness/controller/agent_link.h"

namespace fdrill {

namespace {

std::vector<PanicOutcome> Outcomes(const std::vector<AgentAddress>& agents,
                                   const std::vector<Result<Json>>& results) {
  std::vector<PanicOutcome> out;
  for (size_t i = 0; i < agents.size(); ++i) {
    PanicOutcome o{agents[i].node, results[i].ok() ? Status::Ok() : results[i].status(), ""};
    if (results[i].ok()) o.latch_error = results[i]->value(proto::key::kLatchError, "");
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

std::vector<PanicOutcome> PanicAll(const std::vector<AgentAddress>& agents, const TlsConfig* tls,
                                   Duration timeout, const std::string& reason) {
  // The agent stops its workload first (a few seconds' grace), then reverts.
  return Outcomes(agents, ForEachAgent(agents, tls, timeout, [&](AgentLink& link) {
                    return link.Call(proto::kRevertAll,
                                     {{proto::key::kLatch, true}, {proto::key::kReason, reason}},
                                     timeout + std::chrono::seconds(10));
                  }));
}

std::vector<PanicOutcome> PanicClearAll(const std::vector<AgentAddress>& agents,
                                        const TlsConfig* tls, Duration timeout) {
  return Outcomes(agents, ForEachAgent(agents, tls, timeout, [&](AgentLink& link) {
                    return link.Call(proto::kPanicClear, {}, timeout);
                  }));
}

}  // namespace fdrill

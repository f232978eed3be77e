#include "harness/controller/panic.h"

#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>

#include "harness/controller/agent_link.h"
#include "harness/tls/tls_config.h"
#include "harness/wire/protocol.h"

namespace fdrill {

std::vector<PanicOutcome> PanicAll(const std::vector<AgentAddress>& agents, const TlsConfig* tls,
                                   Duration timeout) {
  auto results = ForEachAgent(agents, tls, timeout, [&](AgentLink& link) -> Result<Json> {
    auto stop = link.Call(proto::kWorkloadStop, {}, timeout + std::chrono::seconds(10));
    auto reverted = link.Call(proto::kRevertAll, {}, timeout);
    auto released = link.Call(proto::kLease, {{proto::key::kTtlMs, 0}}, timeout);
    if (!reverted.ok()) return reverted.status();
    if (!stop.ok()) return stop.status().Annotate("workload_stop");
    if (!released.ok()) return released.status().Annotate("lease release");
    return Json::object();
  });
  std::vector<PanicOutcome> out;
  for (size_t i = 0; i < agents.size(); ++i) {
    out.push_back({agents[i].node, results[i].ok() ? Status::Ok() : results[i].status()});
  }
  return out;
}

}  // namespace fdrill

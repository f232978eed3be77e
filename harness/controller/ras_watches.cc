#include "harness/controller/ras_watches.h"

#include "common/host/nccl_ras.h"
#include "common/wire/protocol.h"
#include "harness/scenario/nccl_ib_timeout.h"

namespace fdrill {

Result<std::vector<RasWatchPlan>> PlanRasWatches(const Scenario& s, char** environ) {
  std::vector<RasWatchPlan> plans;
  const auto lasting = std::chrono::duration_cast<std::chrono::milliseconds>(
      s.TotalDuration() + std::chrono::minutes(1));
  for (const WorkloadSpec& w : s.Workloads()) {
    if (w.backend != "nccl" && w.output != "nccl-tests") continue;
    const auto env = JobNcclEnv(w, environ);
    auto address = RasAddressFromEnv(env);
    if (!address.ok()) {
      return address.status().Annotate("workload" + (w.name.empty() ? "" : " " + w.name) +
                                       " (the NCCL RAS watch)");
    }
    if (!address->enabled) continue;
    auto it = env.find("NCCL_RAS_ADDR");
    RasWatchPlan plan;
    plan.nodes = w.nodes.empty() ? s.NodeNames() : w.nodes;
    plan.body = {{proto::key::kRasAddr, it == env.end() ? "localhost:28028" : it->second},
                 {proto::key::kIntervalMs, 1000},
                 {proto::key::kForMs, lasting.count()}};
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace fdrill

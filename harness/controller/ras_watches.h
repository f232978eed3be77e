// Which agents watch the NCCL job's RAS service during a drill, and how
// (the ras_watch request, docs/reference/protocol.md): every node of each workload
// that runs NCCL (backend nccl, or nccl-tests output), at the job's
// NCCL_RAS_ADDR (its environment as harness/scenario/nccl_ib_timeout.h reads
// it; default localhost:28028), once a second, for the drill's length plus a
// minute. None for a job with NCCL_RAS_ENABLE=0. A malformed NCCL_RAS_ADDR
// or NCCL_RAS_ENABLE is an error before anything is touched.
#pragma once

#include <string>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "harness/scenario/scenario.h"

namespace fdrill {

struct RasWatchPlan {
  std::vector<std::string> nodes;
  Json body;  // the ras_watch request's body
};

Result<std::vector<RasWatchPlan>> PlanRasWatches(const Scenario& s, char** environ);

}  // namespace fdrill

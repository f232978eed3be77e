// plan.json: what the report measures a run against (docs/reference/formats.md),
// written by the drill before its first phase and read by reports/.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/core/json.h"
#include "harness/controller/workload_supervisor.h"
#include "harness/scenario/scenario.h"

namespace fdrill {

// The scenario's nodes, ranks, fabric, expectations and stop conditions,
// and the job outcome predicted for each fault (`predicted_job`). With
// tenants, `workloads` lists each (name, nodes, ranks, start) and the
// top-level ranks are the first workload's, whose numbers the summary's top
// level gives.
Json PlanJson(const Scenario& s, const std::vector<std::unique_ptr<WorkloadSupervisor>>& workloads,
              const std::map<std::string, std::string>& predicted_job);

}  // namespace fdrill

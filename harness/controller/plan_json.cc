#include "harness/controller/plan_json.h"

#include <algorithm>

namespace fdrill {

namespace {

Json MetricLimitsJson(const std::vector<MetricLimit>& limits) {
  Json out = Json::array();
  for (const auto& m : limits) {
    Json j = {{"metric", m.metric}};
    if (!m.fault.empty()) j["fault"] = m.fault;
    if (!m.phase.empty()) j["phase"] = m.phase;
    if (m.max) j["max"] = *m.max;
    if (m.min) j["min"] = *m.min;
    out.push_back(std::move(j));
  }
  return out;
}

Json StopJson(const StopSpec& stop) {
  Json j = Json::object();
  if (stop.min_busbw_gbps) {
    j["min_busbw_gbps"] = *stop.min_busbw_gbps;
    j["for_iterations"] = stop.for_iterations;
  }
  if (stop.max_iteration_time) j["max_iteration_time_s"] = ToSeconds(*stop.max_iteration_time);
  if (stop.max_wrong_elements) j["max_wrong_elements"] = *stop.max_wrong_elements;
  if (stop.max_errors) j["max_errors"] = *stop.max_errors;
  return j;
}

Json LimitsJson(std::optional<double> max_slowdown, std::optional<double> max_recover) {
  return {{"max_slowdown", max_slowdown ? Json(*max_slowdown) : Json(nullptr)},
          {"max_time_to_recover_s", max_recover ? Json(*max_recover) : Json(nullptr)}};
}

}  // namespace

Json PlanJson(const Scenario& s, const std::vector<std::unique_ptr<WorkloadSupervisor>>& workloads,
              const std::map<std::string, std::string>& predicted_job) {
  const ExpectSpec& e = s.expect;
  Json tenants = Json::array();
  for (const auto& w : workloads) {
    if (w->spec().name.empty()) continue;
    Json t = {{"name", w->spec().name}, {"nodes", w->spec().nodes}, {"ranks", w->ReportingRanks()}};
    if (!w->spec().start.empty()) t["start"] = w->spec().start;
    tenants.push_back(std::move(t));
  }
  Json tenant_limits = Json::object();
  for (const auto& [name, limits] : e.workloads) {
    Json j = LimitsJson(limits.max_slowdown, limits.max_time_to_recover_s);
    j["metrics"] = MetricLimitsJson(limits.metrics);
    tenant_limits[name] = std::move(j);
  }
  Json expectations = LimitsJson(e.max_slowdown, e.max_time_to_recover_s);
  expectations["no_residue"] = e.no_residue;
  expectations["data_intact"] = e.data_intact;
  expectations["metrics"] = MetricLimitsJson(e.metrics);
  expectations["job"] = e.job.empty() ? Json(nullptr) : Json(e.job);
  if (!tenant_limits.empty()) expectations["workloads"] = std::move(tenant_limits);
  Json plan = {{"name", s.name},
               {"nodes", s.NodeNames()},
               {"ranks", std::max(1, workloads.front()->ReportingRanks())},
               {"fabric", s.FabricName()},
               {"recovery_window_iters", s.recovery_window_iters},
               {"time_scale", s.time_scale},  // fdrill run --time-scale
               // What a record's rate is: fdrill-collective's busbw, or a
               // job's steps per second (workloads/job_rank.h).
               {"rate_unit", s.workload.Steps() ? "steps/s" : "GB/s"},
               {"expectations", std::move(expectations)},
               {"predicted_job", predicted_job},
               {"stop", StopJson(s.stop)}};
  if (!tenants.empty()) plan["workloads"] = std::move(tenants);
  return plan;
}

}  // namespace fdrill

// expect: what the drill must show for its verdict — slowdown and
// recovery limits, no residue, intact data, and limits on named metrics
// (per fault, by the fault ids the phases made, or for the run).
#include <regex>
#include <set>
#include <string>

#include "common/core/did_you_mean.h"
#include "common/core/fault_ref.h"
#include "harness/scenario/load_sections.h"
#include "harness/scenario/yaml_errors.h"

namespace fdrill {

namespace {

// WHERE.metrics (expect.metrics, expect.workloads.NAME.metrics): a list of
// {metric, max|min, fault} over `names`.
Status LoadMetricLimits(const YamlReader& y, const YAML::Node& n, const Scenario& s,
                        const std::string& where, const std::set<std::string>& names,
                        std::vector<MetricLimit>* out) {
  if (!n.IsSequence())
    return y.Error(n, where + ".metrics must be a list of {metric, max|min, fault}");
  for (const auto& m : n) {
    if (auto st =
            y.CheckKeys(m, where + ".metrics entry", {"metric", "fault", "phase", "max", "min"});
        !st.ok())
      return st;
    MetricLimit limit;
    if (!m["metric"])
      return y.Error(m, where + ".metrics entry needs metric: (one of " + JoinWords(names) + ")");
    auto metric = y.Str(m["metric"], "metric");
    if (!metric.ok()) return metric.status();
    if (!names.count(*metric)) {
      std::string hint = DidYouMean(*metric, names);
      return y.Error(m["metric"], "unknown metric \"" + *metric + "\"" +
                                      (hint.empty() ? "" : "; " + hint) +
                                      " (known: " + JoinWords(names) + ")");
    }
    limit.metric = *metric;
    const bool per_fault = metric->find('.') == std::string::npos;
    if (m["fault"]) {
      if (!per_fault)
        return y.Error(m["fault"], "metric " + *metric + " is one number for the run; drop fault:");
      auto f = y.Str(m["fault"], "fault");
      if (!f.ok()) return f.status();
      bool found = false;
      std::set<std::string> all;
      for (const auto& p : s.phases) {
        for (const auto& x : p.faults) {
          all.insert(x.id);
          found = found || FaultRefMatches(x.id, *f);
        }
      }
      if (!found) {
        std::string hint = DidYouMean(*f, all);
        return y.Error(m["fault"], "no fault has id \"" + *f + "\"" +
                                       (hint.empty() ? "" : "; " + hint) +
                                       " (`fdrill plan` lists the ids)");
      }
      limit.fault = *f;
    }
    if (m["phase"]) {
      // A phase's slowdown: its busbw p50 against the baseline's median
      // (a neighbour arriving, a load that is not a fault).
      if (*metric != "slowdown" || m["fault"]) {
        return y.Error(m["phase"], where +
                                       ".metrics entry: phase: goes with metric: slowdown and "
                                       "no fault: (the slowdown over that whole phase)");
      }
      auto phase = y.Str(m["phase"], "phase");
      if (!phase.ok()) return phase.status();
      std::set<std::string> all;
      for (const auto& p : s.phases) all.insert(p.name);
      if (!all.count(*phase)) {
        std::string hint = DidYouMean(*phase, all);
        return y.Error(m["phase"], "no phase is named \"" + *phase + "\"" +
                                       (hint.empty() ? "" : "; " + hint) +
                                       " (phases: " + JoinWords(all) + ")");
      }
      limit.phase = *phase;
    }
    for (auto [key, field] : {std::pair{"max", &limit.max}, std::pair{"min", &limit.min}}) {
      if (!m[key]) continue;
      auto v = y.Number(m[key], std::string(where + ".metrics ") + key);
      if (!v.ok()) return v.status();
      *field = *v;
    }
    if (!limit.max && !limit.min) return y.Error(m, where + ".metrics entry needs max: or min:");
    if (limit.max && limit.min && *limit.min > *limit.max)
      return y.Error(m, where + ".metrics entry: min is above max");
    out->push_back(std::move(limit));
  }
  return Status::Ok();
}

// expect.workloads: NAME -> {max_slowdown, max_time_to_recover, metrics}:
// what each fault may do to one tenant.
Status LoadWorkloadExpects(const YamlReader& y, const YAML::Node& n, const Scenario& s,
                           ExpectSpec* e) {
  std::set<std::string> tenants;
  for (const auto& t : s.tenants) tenants.insert(t.name);
  if (tenants.empty()) {
    return y.Error(n,
                   "expect.workloads names tenants of workloads:; this drill has one "
                   "workload: (use expect's own max_slowdown and metrics)");
  }
  if (!n.IsMap()) return y.Error(n, "expect.workloads must map a tenant's name to its limits");
  for (const auto& entry : n) {
    auto name = y.Str(entry.first, "expect.workloads key");
    if (!name.ok()) return name.status();
    if (!tenants.count(*name)) {
      std::string hint = DidYouMean(*name, tenants);
      return y.Error(entry.first, "no workload \"" + *name + "\"" +
                                      (hint.empty() ? "" : "; " + hint) +
                                      " (workloads: " + JoinWords(tenants) + ")");
    }
    const std::string where = "expect.workloads." + *name;
    const YAML::Node w = entry.second;
    if (auto st = y.CheckKeys(w, where, {"max_slowdown", "max_time_to_recover", "metrics"});
        !st.ok())
      return st;
    WorkloadExpect limits;
    if (w["max_slowdown"]) {
      double v = 0;
      if (!YAML::convert<double>::decode(w["max_slowdown"], v) || v < 1) {
        return y.Error(w["max_slowdown"],
                       where + ".max_slowdown must be a number >= 1 (a ratio, like 1.1)");
      }
      limits.max_slowdown = v;
    }
    if (w["max_time_to_recover"]) {
      auto d = y.Dur(w["max_time_to_recover"], where + ".max_time_to_recover");
      if (!d.ok()) return d.status();
      limits.max_time_to_recover_s = ToSeconds(*d);
    }
    if (w["metrics"]) {
      // What summary.json gives per workload: faults[].workloads.NAME.
      const std::set<std::string> names = {"slowdown", "stall_ms", "time_to_impact_s",
                                           "time_to_recover_s"};
      if (auto st = LoadMetricLimits(y, w["metrics"], s, where, names, &limits.metrics); !st.ok())
        return st;
    }
    e->workloads.emplace_back(*name, std::move(limits));
  }
  return Status::Ok();
}

}  // namespace

Status LoadExpect(const YamlReader& y, const YAML::Node& n, const Scenario& s, ExpectSpec* e) {
  if (auto st = y.CheckKeys(n, "expect",
                            {"max_slowdown", "max_time_to_recover", "no_residue", "data_intact",
                             "metrics", "workloads", "job", "digest"});
      !st.ok())
    return st;
  if (n["job"]) {
    auto job = y.Str(n["job"], "expect.job");
    if (!job.ok()) return job.status();
    const std::set<std::string> known = {"error_not_hang", "rides_through", "as_predicted"};
    if (!known.count(*job)) {
      std::string hint = DidYouMean(*job, known);
      return y.Error(n["job"], "expect.job: unknown \"" + *job + "\"" +
                                   (hint.empty() ? "" : "; " + hint) +
                                   " (known: " + JoinWords(known) + ")");
    }
    if (*job == "as_predicted" && !s.workload.Rdma()) {
      return y.Error(n["job"],
                     "expect.job: as_predicted compares each link-down fault with what NCCL's "
                     "IB timeout predicts, which governs RDMA traffic only; this workload's "
                     "transport is tcp (workload.transport: rdma, or backend: nccl)");
    }
    e->job = *job;
  }
  if (n["digest"]) {
    const YAML::Node d = n["digest"];
    if (d.IsMap()) {
      if (auto st = y.CheckKeys(d, "expect.digest", {"key", "tolerance"}); !st.ok()) return st;
      if (!d["key"] || !d["tolerance"]) {
        return y.Error(d,
                       "expect.digest needs both key (the name of the job's last \"KEY: NUMBER\" "
                       "line, like param_norm) and tolerance (the relative difference allowed, "
                       "like 1e-6)");
      }
      auto key = y.Str(d["key"], "expect.digest.key");
      if (!key.ok()) return key.status();
      static const std::regex kKey("[A-Za-z_][A-Za-z0-9_.-]*");
      if (!std::regex_match(*key, kKey)) {
        return y.Error(d["key"], "expect.digest.key \"" + *key +
                                     "\" is not a name the job could print as \"KEY: NUMBER\" "
                                     "(letters, digits, _ . -)");
      }
      double tol = -1;
      if (!YAML::convert<double>::decode(d["tolerance"], tol) || !(tol >= 0) || tol >= 1) {
        return y.Error(d["tolerance"],
                       "expect.digest.tolerance must be a relative difference from 0 to below 1 "
                       "(like 1e-6)");
      }
      e->digest_key = *key;
      e->digest_tolerance = tol;
    } else {
      auto v = y.Str(d, "expect.digest");
      if (!v.ok()) return v.status();
      if (*v != "equal") {
        return y.Error(d,
                       "expect.digest must be equal (the job's final \"digest: HEX\" line, "
                       "bitwise, against its fault-free run's) or {key: K, tolerance: T} (a "
                       "number the job prints, within a relative difference)");
      }
    }
    if (s.workload.Train()) {
      return y.Error(d,
                     "expect.digest: mode: train's digest is always checked (against "
                     "fdrill-train-ref); drop it");
    }
    if (!s.workload.External() || !s.Emulated() || s.workload.framework != "pytorch") {
      return y.Error(d,
                     "expect.digest reruns a framework: pytorch command fault-free on this "
                     "host's loopback after the drill, on the emulated fabric (a real cluster's "
                     "job is its operator's to rerun)");
    }
    e->digest_equal = true;
  }
  if (n["max_slowdown"]) {
    double v = 0;
    if (!YAML::convert<double>::decode(n["max_slowdown"], v) || v < 1) {
      return y.Error(n["max_slowdown"],
                     "expect.max_slowdown must be a number >= 1 (a ratio, like 12)");
    }
    e->max_slowdown = v;
  }
  if (n["max_time_to_recover"]) {
    auto d = y.Dur(n["max_time_to_recover"], "expect.max_time_to_recover");
    if (!d.ok()) return d.status();
    e->max_time_to_recover_s = ToSeconds(*d);
  }
  for (auto [key, field] :
       {std::pair{"no_residue", &e->no_residue}, std::pair{"data_intact", &e->data_intact}}) {
    if (!n[key]) continue;
    bool b = false;
    if (!YAML::convert<bool>::decode(n[key], b))
      return y.Error(n[key], std::string("expect.") + key + " must be true or false");
    *field = b;
  }
  if (n["metrics"]) {
    const auto& known = ExpectableMetrics();
    if (auto st = LoadMetricLimits(y, n["metrics"], s, "expect",
                                   std::set<std::string>(known.begin(), known.end()), &e->metrics);
        !st.ok())
      return st;
  }
  if (n["workloads"]) {
    if (auto st = LoadWorkloadExpects(y, n["workloads"], s, e); !st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace fdrill

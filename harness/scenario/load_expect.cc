// expect: what the drill must show for its verdict — slowdown and
// recovery limits, no residue, intact data, and limits on named metrics
// (per fault, by the fault ids the phases made, or for the run).
#include <set>
#include <string>

#include "harness/core/did_you_mean.h"
#include "harness/core/fault_ref.h"
#include "harness/scenario/load_sections.h"
#include "harness/scenario/yaml_errors.h"

namespace fdrill {

Status LoadExpect(const YamlReader& y, const YAML::Node& n, const Scenario& s, ExpectSpec* e) {
  if (auto st = y.CheckKeys(
          n, "expect",
          {"max_slowdown", "max_time_to_recover", "no_residue", "data_intact", "metrics"});
      !st.ok())
    return st;
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
    if (!n["metrics"].IsSequence())
      return y.Error(n["metrics"], "expect.metrics must be a list of {metric, max|min, fault}");
    const auto& known = ExpectableMetrics();
    const std::set<std::string> names(known.begin(), known.end());
    for (const auto& m : n["metrics"]) {
      if (auto st = y.CheckKeys(m, "expect.metrics entry", {"metric", "fault", "max", "min"});
          !st.ok())
        return st;
      MetricLimit limit;
      if (!m["metric"])
        return y.Error(m, "expect.metrics entry needs metric: (one of " + JoinWords(names) + ")");
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
          return y.Error(m["fault"],
                         "metric " + *metric + " is one number for the run; drop fault:");
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
      for (auto [key, field] : {std::pair{"max", &limit.max}, std::pair{"min", &limit.min}}) {
        if (!m[key]) continue;
        auto v = y.Number(m[key], std::string("expect.metrics ") + key);
        if (!v.ok()) return v.status();
        *field = *v;
      }
      if (!limit.max && !limit.min) return y.Error(m, "expect.metrics entry needs max: or min:");
      if (limit.max && limit.min && *limit.min > *limit.max)
        return y.Error(m, "expect.metrics entry: min is above max");
      e->metrics.push_back(std::move(limit));
    }
  }
  return Status::Ok();
}

}  // namespace fdrill

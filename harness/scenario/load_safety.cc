// safety: the limits a drill runs within — the agents' leases, the stop
// conditions that abort it, and the blast radius its faults may reach.
#include <set>
#include <string>

#include "harness/scenario/load_sections.h"

namespace fdrill {

namespace {

// safety.stop: conditions on the live metrics that abort the drill.
Status LoadStop(const YamlReader& y, const YAML::Node& n, StopSpec* stop) {
  if (auto st = y.CheckKeys(n, "safety.stop",
                            {"min_busbw", "for_iterations", "max_iteration_time",
                             "max_wrong_elements", "max_errors"});
      !st.ok())
    return st;
  if (n["min_busbw"]) {
    auto v = y.Number(n["min_busbw"], "safety.stop.min_busbw");
    if (!v.ok()) return v.status();
    if (*v <= 0)
      return y.Error(n["min_busbw"],
                     "safety.stop.min_busbw must be above 0 (GB/s, as nccl-tests' busbw)");
    stop->min_busbw_gbps = *v;
  }
  if (n["for_iterations"]) {
    auto v = y.Int(n["for_iterations"], "safety.stop.for_iterations", 1, 100000);
    if (!v.ok()) return v.status();
    stop->for_iterations = static_cast<int>(*v);
  }
  if (n["max_iteration_time"]) {
    auto d = y.Dur(n["max_iteration_time"], "safety.stop.max_iteration_time");
    if (!d.ok()) return d.status();
    stop->max_iteration_time = *d;
  }
  if (n["max_wrong_elements"]) {
    auto v = y.Int(n["max_wrong_elements"], "safety.stop.max_wrong_elements", 0, INT64_MAX);
    if (!v.ok()) return v.status();
    stop->max_wrong_elements = *v;
  }
  if (n["max_errors"]) {
    auto v = y.Int(n["max_errors"], "safety.stop.max_errors", 0, 1000000);
    if (!v.ok()) return v.status();
    stop->max_errors = static_cast<int>(*v);
  }
  return Status::Ok();
}

// safety.blast_radius: limits on what the faults in force at once reach.
Status LoadBlastRadius(const YamlReader& y, const YAML::Node& n, Scenario* s) {
  BlastRadiusSpec& b = s->blast_radius;
  const std::pair<const char*, std::optional<int>*> keys[] = {
      {"max_nodes", &b.max_nodes},
      {"max_rails_per_node", &b.max_rails_per_node},
      {"max_rails", &b.max_rails},
      {"max_leaves", &b.max_leaves},
      {"max_nvlink_domains", &b.max_nvlink_domains}};
  std::set<std::string> allowed;
  for (const auto& [key, field] : keys) allowed.insert(key);
  if (auto st = y.CheckKeys(n, "safety.blast_radius", allowed); !st.ok()) return st;
  for (const auto& [key, field] : keys) {
    if (!n[key]) continue;
    if (std::string(key) != "max_nodes" && !s->topology) {
      return y.Error(
          n[key],
          std::string("safety.blast_radius.") + key +
              " counts in fabric terms and needs topology: FILE (rails, leaves, NVLink domains; "
              "see scenarios/topology.example.yaml)");
    }
    // 0 is a limit too: max_nvlink_domains 0 keeps a drill off NVLink.
    const bool nodes = std::string(key) == "max_nodes";
    auto v = y.Int(n[key], std::string("safety.blast_radius.") + key, nodes ? 1 : 0, 100000);
    if (!v.ok()) return v.status();
    *field = static_cast<int>(*v);
  }
  return Status::Ok();
}

}  // namespace

Status LoadSafety(const YamlReader& y, const YAML::Node& n, Scenario* s) {
  if (auto st = y.CheckKeys(
          n, "safety", {"lease_ttl", "lease_renew", "max_faulted_nodes", "stop", "blast_radius"});
      !st.ok())
    return st;
  if (n["stop"]) {
    if (auto st = LoadStop(y, n["stop"], &s->stop); !st.ok()) return st;
  }
  if (n["blast_radius"]) {
    if (auto st = LoadBlastRadius(y, n["blast_radius"], s); !st.ok()) return st;
  }
  if (n["lease_ttl"]) {
    auto d = y.Dur(n["lease_ttl"], "safety.lease_ttl");
    if (!d.ok()) return d.status();
    s->lease_ttl = *d;
  }
  if (n["lease_renew"]) {
    auto d = y.Dur(n["lease_renew"], "safety.lease_renew");
    if (!d.ok()) return d.status();
    s->lease_renew = *d;
  }
  if (s->lease_renew * 2 > s->lease_ttl) {
    return y.Error(n,
                   "safety.lease_renew must be at most half of safety.lease_ttl, or one lost "
                   "renewal drops the lease");
  }
  if (n["max_faulted_nodes"]) {
    auto v = y.Int(n["max_faulted_nodes"], "safety.max_faulted_nodes", 1, 100000);
    if (!v.ok()) return v.status();
    s->max_faulted_nodes = static_cast<int>(*v);
  }
  // One limit under two names, the nodes the faults in force at once reach:
  // given both, the stricter holds, under both names.
  if (const auto& max_nodes = s->blast_radius.max_nodes) {
    if (!n["max_faulted_nodes"] || *max_nodes < s->max_faulted_nodes)
      s->max_faulted_nodes = *max_nodes;
    s->blast_radius.max_nodes = s->max_faulted_nodes;
  }
  return Status::Ok();
}

}  // namespace fdrill

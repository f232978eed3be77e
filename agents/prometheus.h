// The agent's state as Prometheus text exposition format 0.0.4
// (prometheus.io/docs/instrumenting/exposition_formats): for every family one
// "# HELP" and one "# TYPE" line, then its samples, families contiguous; no
// two samples of a family with the same labels; label values escaped (\\,
// \", \n); the body ends with a newline. Pure: no clock, no I/O.
//
// Families (every sample carries node="<node>"):
//   fdrill_agent_info{version}                       gauge, always 1
//   fdrill_faults_active{kind}                       gauge, live faults per kind
//   fdrill_lease_active / fdrill_workload_running     gauge, 0 or 1
//   fdrill_journal_writable / fdrill_audit_writable   gauge, 0 or 1 (0: the state
//                                                     directory's disk is full or
//                                                     read-only; faults are refused)
//   fdrill_panic_latched                              gauge, 0 or 1
//   fdrill_counters_sample_age_seconds                gauge, absent before the first sample
//   counters, cumulative as the kernel/device keeps them, by key shape:
//     "tcp.<counter>"               -> fdrill_tcp_<counter>_total (the node's)
//     "<interface>.<counter>"       -> fdrill_netdev_<counter>_total{interface}
//     "ib/<device>/<port>.<counter>" -> fdrill_ib_port_<counter>_total{device,port}
//     "gpu<i>/nvlink<l>.<counter>"  -> fdrill_nvlink_<counter>_total{gpu,link}
//     anything else                 -> fdrill_misc_total{name="<key>"}
//   (<counter> sanitised to [a-zA-Z0-9_]; a trailing "_total" is not doubled).
//   Not "fdrill_counter_total": promtool's lint rejects a name holding its
//   own type.
// Interface names may hold dots (VLANs: "eth0.100"), so a key splits at its
// last dot. A counter that is not a number is skipped. Two keys on one
// series: the one that needed no sanitising wins, else the first in key
// order; the other is skipped.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "common/wire/wire.h"

namespace fdrill {

struct AgentMetricsSnapshot {
  std::string node;
  std::string version;
  std::map<std::string, int> faults_active;  // kind -> live faults (0s included)
  bool lease_active = false;
  bool workload_running = false;
  bool journal_writable = true;
  bool audit_writable = true;
  bool panic_latched = false;
  Json counters = Json::object();      // flat {"<key>": number}
  std::optional<double> sample_age_s;  // since `counters` was sampled
};

// "text/plain; version=0.0.4; charset=utf-8"
extern const char kPrometheusContentType[];

std::string RenderPrometheus(const AgentMetricsSnapshot& s);

// Exposed for tests: the escapes the format asks for.
std::string EscapeLabelValue(std::string_view v);
std::string SanitizeMetricPart(std::string_view v);

}  // namespace fdrill

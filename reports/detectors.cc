#include "reports/detectors.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace fdrill {

namespace {

std::string Processes(int64_t n, const char* state) {
  return fmt::format("{} process{} {}", n, n == 1 ? "" : "es", state);
}

// What a RAS sample says is wrong, or "" when it says the job is whole. A
// node whose RAS stopped answering after it had answered lost its NCCL
// processes (dead, or too stuck to serve).
std::string RasNotices(const Event& e, bool answered_before) {
  if (e.answered.value_or(false)) {
    std::string what;
    if (e.ras_missing.value_or(0) > 0) what = Processes(*e.ras_missing, "missing");
    if (e.ras_dead.value_or(0) > 0) {
      what += (what.empty() ? "" : ", ") + Processes(*e.ras_dead, "dead");
    }
    return what.empty() ? "" : "RAS on " + e.node + ": " + what;
  }
  return answered_before ? "RAS on " + e.node + " stopped answering (" + e.message + ")" : "";
}

// What an HCA's async event says went wrong, or "" for PORT_ACTIVE, which
// says a port is back, not that anything went: "n1 mlx5_0 port 1: PORT_ERR".
std::string IbNotice(const Event& e) {
  if (e.ib_event.empty() || e.ib_event == "PORT_ACTIVE") return "";
  const std::string port = e.port.value_or(0) > 0 ? " port " + std::to_string(*e.port) : "";
  return e.node + " " + e.device + port + ": " + e.ib_event;
}

}  // namespace

void AddDetectors(const std::vector<Event>& events, std::vector<FaultStats>* faults) {
  bool watched = false;
  // Some node's agent listened to its RDMA devices for the drill.
  bool ib_watched = false;
  // Every RAS sample and HCA event that says something is wrong, in the
  // log's order, with what it says: whether a node had answered before
  // depends on every sample before it, so this is one walk, not one per
  // fault.
  using Notices = std::vector<std::pair<const Event*, std::string>>;
  Notices ras_notices, ib_notices;
  std::map<std::string, bool> answered;  // per node, so far
  for (const Event& e : events) {
    ib_watched = ib_watched || e.type == "ib_async" ||
                 (e.type == "ib_watch" && e.ib_devices.value_or(0) > 0);
    if (e.type == "ib_async") {
      if (std::string what = IbNotice(e); !what.empty()) ib_notices.push_back({&e, what});
      continue;
    }
    if (e.type != "ras") continue;
    watched = true;
    const bool before = answered[e.node];
    answered[e.node] = before || e.answered.value_or(false);
    if (std::string what = RasNotices(e, before); !what.empty()) ras_notices.push_back({&e, what});
  }
  // The first notice in [from, until).
  auto first = [](const Notices& notices, const char* detector, double from, double until) {
    Detection d{.detector = detector};
    for (const auto& [e, what] : notices) {
      if (e->t < from || e->t >= until) continue;
      d.after_s = e->t - from;
      d.what = what;
      break;
    }
    return d;
  };
  for (size_t i = 0; i < faults->size(); ++i) {
    FaultStats& f = (*faults)[i];
    Detection own{.detector = "fdrill"};
    if (f.time_to_localise_s) {
      own.after_s = f.time_to_localise_s;
      own.what = "named " + (f.localisation ? f.localisation->element : f.node) + " live";
    } else if (f.time_to_impact_s) {
      own.after_s = f.time_to_impact_s;
      own.what = "impact in the iteration times";
    }
    f.detectors = {own};
    const double until = watched || ib_watched ? StretchEnd(*faults, f) : 0;
    if (watched) f.detectors.push_back(first(ras_notices, "nccl_ras", f.applied_at_s, until));
    if (ib_watched) f.detectors.push_back(first(ib_notices, "ib_async", f.applied_at_s, until));
    f.first_detector.clear();
    std::optional<double> best;
    for (const Detection& d : f.detectors) {
      if (d.after_s && (!best || *d.after_s < *best)) {
        best = d.after_s;
        f.first_detector = d.detector;
      }
    }
  }
}

}  // namespace fdrill

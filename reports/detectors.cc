#include "reports/detectors.h"

#include <functional>
#include <map>

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

// The first event of type `type` in [from, until) that `notice` words.
Detection FirstNotice(const std::vector<Event>& events, const char* type, double from, double until,
                      const std::function<std::string(const Event&)>& notice) {
  Detection d;
  for (const Event& e : events) {
    if (e.type != type || e.t < from || e.t >= until) continue;
    if (std::string what = notice(e); !what.empty()) {
      d.after_s = e.t - from;
      d.what = what;
      break;
    }
  }
  return d;
}

}  // namespace

void AddDetectors(const std::vector<Event>& events, std::vector<FaultStats>* faults) {
  bool watched = false;
  // Some node's agent listened to its RDMA devices for the drill.
  bool ib_watched = false;
  for (const Event& e : events) {
    watched = watched || e.type == "ras";
    ib_watched = ib_watched || e.type == "ib_async" ||
                 (e.type == "ib_watch" && e.ib_devices.value_or(0) > 0);
  }
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
    if (watched) {
      const double until = StretchEnd(*faults, f);
      Detection ras{.detector = "nccl_ras"};
      std::map<std::string, bool> answered;  // per node, so far
      for (const Event& e : events) {
        if (e.type != "ras") continue;
        const bool before = answered[e.node];
        answered[e.node] = before || e.answered.value_or(false);
        if (e.t < f.applied_at_s || e.t >= until) continue;
        if (std::string what = RasNotices(e, before); !what.empty()) {
          ras.after_s = e.t - f.applied_at_s;
          ras.what = what;
          break;
        }
      }
      f.detectors.push_back(ras);
    }
    if (ib_watched) {
      Detection ib =
          FirstNotice(events, "ib_async", f.applied_at_s, StretchEnd(*faults, f), IbNotice);
      ib.detector = "ib_async";
      f.detectors.push_back(ib);
    }
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

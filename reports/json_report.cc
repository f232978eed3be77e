#include "reports/json_report.h"

#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/agent_loss.h"
#include "reports/slurm_changes.h"

namespace fdrill {

namespace {

using Json = nlohmann::ordered_json;

// Rounded to 6 significant digits; from_chars gives the double nearest the
// decimal, which nlohmann prints in its shortest form ("2.5", not "2.50000001").
Json Number(double x) {
  if (!std::isfinite(x)) return nullptr;
  const std::string text = fmt::format("{:.6g}", x);
  double rounded = x;
  std::from_chars(text.data(), text.data() + text.size(), rounded);
  return rounded;
}

Json Number(const std::optional<double>& x) { return x ? Number(*x) : Json(nullptr); }

Json Value(const ExpectValue& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b;
  if (const double* d = std::get_if<double>(&v)) return Number(*d);
  return nullptr;
}

Json Phase(const PhaseStats& p) {
  return {{"name", p.name},
          {"start_s", Number(p.start_s)},
          {"end_s", Number(p.end_s)},
          {"iterations", p.count},
          {"iter_ms_p50", Number(p.iter_ms_p50)},
          {"iter_ms_p99", Number(p.iter_ms_p99)},
          {"busbw_gbps_p50", Number(p.busbw_gbps_p50)},
          {"busbw_gbps_mean", Number(p.busbw_gbps_mean)},
          {"slowdown", Number(p.slowdown)}};
}

Json Ranks(const FaultStats& f) {
  Json out = Json::array();
  for (const RankBreakdown& r : f.ranks) {
    out.push_back({{"rank", r.rank},
                   {"node", r.node},
                   {"time_ms_p50", Number(r.time_ms_p50)},
                   {"wait_ms_p50", Number(r.wait_ms_p50)}});
  }
  return out;
}

Json CulpritJson(const std::optional<Culprit>& c) {
  if (!c) return nullptr;
  return {{"element", c->element},
          {"node", c->node},
          {"link", c->link.empty() ? Json(nullptr) : Json(c->link)},
          {"rank", c->rank ? Json(*c->rank) : Json(nullptr)},
          {"confidence", c->confidence},
          {"evidence", c->evidence}};
}

Json Fault(const FaultStats& f) {
  Json j = {{"id", f.id},
            {"kind", f.kind},
            {"node", f.node},
            {"target", f.target},
            {"applied_at_s", Number(f.applied_at_s)},
            {"reverted_at_s", Number(f.reverted_at_s)},
            {"slowdown", Number(f.slowdown)},
            {"time_to_impact_s", Number(f.time_to_impact_s)},
            {"time_to_recover_s", Number(f.time_to_recover_s)},
            {"stall_ms", Number(f.stall_ms)},
            {"job_failed_after_s", Number(f.job_failed_after_s)},
            {"lost_gpu_s", Number(f.lost_gpu_s)},
            {"culprit_link", f.culprit_link ? Json(*f.culprit_link) : Json(nullptr)},
            {"ranks", Ranks(f)},
            {"culprit", f.culprit ? Json(*f.culprit) : Json(nullptr)},
            {"culprit_rank", f.culprit_rank ? Json(*f.culprit_rank) : Json(nullptr)},
            {"localisation", CulpritJson(f.localisation)},
            {"time_to_localise_s", Number(f.time_to_localise_s)},
            {"measured_over", f.measured_over},
            {"overlapped_with", f.overlapped_with},
            {"alone_s", Number(f.alone_s)},
            {"applied_under_another", f.applied_under_another},
            {"reverted_under_another", f.reverted_under_another}};
  Json detectors = Json::array();
  for (const Detection& d : f.detectors) {
    detectors.push_back(
        {{"detector", d.detector}, {"after_s", Number(d.after_s)}, {"what", d.what}});
  }
  j["detectors"] = std::move(detectors);
  j["first_detector"] = f.first_detector.empty() ? Json(nullptr) : Json(f.first_detector);
  j["job_outcome"] = f.job_outcome;
  j["predicted_job"] = f.predicted_job ? Json(*f.predicted_job) : Json(nullptr);
  if (!f.workloads.empty()) {
    Json per = Json::object();
    for (const WorkloadEffect& w : f.workloads) {
      per[w.workload] = {{"slowdown", Number(w.slowdown)},
                         {"stall_ms", Number(w.stall_ms)},
                         {"time_to_impact_s", Number(w.time_to_impact_s)},
                         {"time_to_recover_s", Number(w.time_to_recover_s)}};
    }
    j["workloads"] = std::move(per);
  }
  return j;
}

}  // namespace

std::string RenderSummaryJson(const Summary& s) {
  Json j;
  j["name"] = s.name;
  j["verdict"] = VerdictName(s.verdict);
  j["rate_unit"] = s.rate_unit;
  j["baseline"] = {{"phase", s.baseline.phase},
                   {"iterations", s.baseline.count},
                   {"busbw_median", Number(s.baseline.busbw_median)},
                   {"busbw_mean", Number(s.baseline.busbw_mean)},
                   {"progress_gbps", Number(s.baseline.progress_gbps)},
                   {"mad", Number(s.baseline.mad)},
                   {"band_low", Number(s.baseline.band_low)},
                   {"learned", s.baseline.learned}};
  j["ettr"] = Number(s.ettr);
  if (!s.workloads.empty()) {
    Json per = Json::object();
    for (const WorkloadStats& w : s.workloads) {
      Json phases = Json::array();
      for (const PhaseStats& p : w.phases) phases.push_back(Phase(p));
      per[w.name] = {{"nodes", w.nodes},
                     {"ranks", w.ranks},
                     {"start", w.start.empty() ? Json(nullptr) : Json(w.start)},
                     {"baseline_busbw_median", Number(w.baseline.busbw_median)},
                     {"baseline_iterations", w.baseline.count},
                     {"phases", std::move(phases)}};
    }
    j["workloads"] = std::move(per);
  }
  j["phases"] = Json::array();
  for (const PhaseStats& p : s.phases) j["phases"].push_back(Phase(p));
  j["faults"] = Json::array();
  for (const FaultStats& f : s.faults) j["faults"].push_back(Fault(f));
  j["lost_gpu_s"] = Number(s.lost_gpu_s);
  j["compound_windows"] = Json::array();
  for (const CompoundWindow& w : s.compound) {
    Json culprits = Json::array();
    for (const Culprit& c : w.culprits) culprits.push_back(CulpritJson(c));
    Json shares = Json::object();
    for (const FaultShare& sh : w.shares) shares[sh.fault] = Number(sh.share);
    j["compound_windows"].push_back(
        {{"faults", w.faults},
         {"start_s", Number(w.start_s)},
         {"end_s", Number(w.end_s)},
         {"together_s", Number(w.together_s)},
         {"slowdown", Number(w.slowdown)},
         {"stall_ms", Number(w.stall_ms)},
         {"lost_gpu_s", Number(w.lost_gpu_s)},
         {"culprits", std::move(culprits)},
         {"share_basis", w.share_basis.empty() ? Json(nullptr) : Json(w.share_basis)},
         {"shares", std::move(shares)}});
  }
  j["links"] = Json::array();
  for (const LinkStats& l : s.links) {
    Json phases = Json::array();
    for (const LinkPhase& p : l.phases) {
      phases.push_back({{"phase", p.phase},
                        {"tx_gbps", Number(p.tx_gbps)},
                        {"rx_gbps", Number(p.rx_gbps)},
                        {"utilisation", Number(p.utilisation)},
                        {"drops", p.drops},
                        {"errors", p.errors},
                        {"shaped", p.shaped},
                        {"carrier_changes", p.carrier_changes}});
    }
    j["links"].push_back({{"node", l.node},
                          {"link", l.link},
                          {"capacity_gbps", Number(l.capacity_gbps)},
                          {"phases", std::move(phases)}});
  }
  j["transport"] = Json::array();
  for (const NodeTransport& n : s.transport) {
    Json phases = Json::array();
    for (const TransportPhase& p : n.phases) {
      phases.push_back(
          {{"phase", p.phase}, {"retrans_segs", p.retrans_segs}, {"timeouts", p.timeouts}});
    }
    j["transport"].push_back({{"node", n.node}, {"phases", std::move(phases)}});
  }
  j["anomalies"] = Json::array();
  for (const Anomaly& a : s.anomalies) {
    j["anomalies"].push_back({{"start_s", Number(a.start_s)},
                              {"end_s", Number(a.end_s)},
                              {"iterations", a.iterations},
                              {"slowdown", Number(a.slowdown)},
                              {"culprit", CulpritJson(a.culprit)}});
  }
  j["residue_checked"] = s.residue_checked;
  j["residue"] = Json::array();
  for (const ResidueItem& r : s.residue) {
    j["residue"].push_back(
        {{"node", r.node}, {"object", r.object}, {"before", r.before}, {"after", r.after}});
  }
  j["agents_lost"] = Json::array();
  for (const AgentLoss& a : s.agents_lost) {
    Json left = Json::array();
    for (const LeftFault& f : a.faults_left) {
      left.push_back({{"id", f.id},
                      {"kind", f.kind},
                      {"target", f.target},
                      {"swept_at_s", Number(f.swept_at_s)},
                      {"text", LeftFaultText(a, f)}});
    }
    j["agents_lost"].push_back({{"node", a.node},
                                {"reason", a.reason},
                                {"lost_at_s", a.lost_at_s},
                                {"back_at_s", Number(a.back_at_s)},
                                {"faults_left", std::move(left)}});
  }
  j["slurm"] = Json::array();
  for (const SlurmChange& c : s.slurm) {
    Json change = {{"t", c.t}, {"from", c.from}, {"to", c.to}, {"text", SlurmChangeText(c)}};
    if (c.job.empty()) {
      change["node"] = c.node;
      change["reason"] = c.reason;
    } else {
      change["job"] = c.job;
    }
    j["slurm"].push_back(std::move(change));
  }
  auto opt_int = [](const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); };
  auto opt_str = [](const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); };
  Json failures = Json::array();
  for (const RestartStats& r : s.rollback.failures) {
    failures.push_back({{"failed_at_s", Number(r.failed_at_s)},
                        {"cause", r.cause},
                        {"reason", r.reason},
                        {"fault", opt_str(r.fault)},
                        {"time_to_detect_s", Number(r.time_to_detect_s)},
                        {"time_to_restart_s", Number(r.time_to_restart_s)},
                        {"resumed_step", opt_int(r.resumed_step)},
                        {"iterations_lost", opt_int(r.iterations_lost)},
                        {"back_in_band_s", Number(r.back_in_band_s)}});
  }
  j["rollback"] = {{"restarts", s.rollback.restarts},
                   {"iterations_lost", s.rollback.iterations_lost},
                   {"data_intact", s.rollback.data_intact},
                   {"wrong_elements", s.rollback.wrong_elements},
                   {"failures", failures},
                   {"digest_steps", opt_int(s.rollback.digest_steps)},
                   {"digest", opt_str(s.rollback.digest)},
                   {"expected_digest", opt_str(s.rollback.expected_digest)},
                   {"digest_key", s.rollback.digest_key},
                   {"digest_tolerance", Number(s.rollback.digest_tolerance)},
                   {"digest_difference", Number(s.rollback.digest_difference)}};
  j["counters"] = Json::array();
  for (const CounterDelta& c : s.counters) {
    j["counters"].push_back(
        {{"phase", c.phase}, {"node", c.node}, {"counter", c.counter}, {"delta", Number(c.delta)}});
  }
  j["expectations"] = Json::array();
  for (const ExpectationResult& e : s.expectations) {
    j["expectations"].push_back({{"name", e.name},
                                 {"limit", Value(e.limit)},
                                 {"measured", Value(e.measured)},
                                 {"pass", e.pass}});
  }
  j["stopped"] = s.stopped ? Json(*s.stopped) : Json(nullptr);
  j["errors"] = s.errors;
  // Strings came from the run directory: replace, never throw on bad UTF-8.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace fdrill

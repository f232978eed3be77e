#include "reports/html_report.h"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/agent_loss.h"
#include "reports/cell_text.h"
#include "reports/fabric_map.h"
#include "reports/html_charts.h"
#include "reports/link_stats.h"
#include "reports/slurm_changes.h"
#include "reports/xml_text.h"

namespace fdrill {

namespace {

constexpr const char* kNone = kNoValue;

constexpr char kStyle[] = R"(<style>
body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1140px;color:#111;padding:0 12px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f3f4f6}
.badge{padding:2px 10px;border-radius:4px;color:#fff;font-weight:bold}
.pass{background:#15803d}.fail{background:#b91c1c}.error{background:#7c3aed}
.FAIL{color:#b91c1c;font-weight:bold}.PASS{color:#15803d}
svg.chart{display:block;max-width:100%;height:auto;margin:10px 0}
.legend span{display:inline-block;margin-right:14px;font-size:13px}
.swatch{display:inline-block;width:14px;height:3px;vertical-align:middle;margin-right:4px}
.note{color:#555;font-size:12px}
</style>
)";

std::string Esc(std::string_view s) { return EscapeXml(s); }

std::string Num(const std::optional<double>& x, int decimals) { return CellNumber(x, decimals); }
std::string Value(const ExpectValue& v) { return CellExpectValue(v); }
std::string CulpritText(const Culprit& c) { return c.element + " (" + c.confidence + ")"; }

// A table: `head` cells, then rows of cells already escaped; cells of
// columns in `numeric` are right-aligned.
class Table {
 public:
  Table(std::initializer_list<const char*> head, std::vector<bool> numeric)
      : numeric_(std::move(numeric)) {
    html_ = "<table><tr>";
    for (const char* h : head) html_ += fmt::format("<th>{}</th>", h);
    html_ += "</tr>\n";
  }
  void Row(std::initializer_list<std::string> cells) {
    html_ += "<tr>";
    size_t i = 0;
    for (const std::string& c : cells) {
      const bool n = i < numeric_.size() && numeric_[i];
      html_ += fmt::format("<td{}>{}</td>", n ? " class=\"n\"" : "", c);
      ++i;
    }
    html_ += "</tr>\n";
  }
  std::string Done() { return html_ + "</table>\n"; }

 private:
  std::vector<bool> numeric_;
  std::string html_;
};

void WritePhases(const Summary& s, std::string* out) {
  *out += "<h2>Phases</h2>\n";
  if (s.phases.empty()) {
    *out += "<p>No phase events were recorded.</p>\n";
    return;
  }
  Table t({"phase", "start (s)", "end (s)", "iterations", "iter p50 (ms)", "iter p99 (ms)",
           "busbw median (GB/s)", "busbw time-weighted (GB/s)", "slowdown (time-weighted)"},
          {false, true, true, true, true, true, true, true, true});
  for (const PhaseStats& p : s.phases) {
    t.Row({Esc(p.name), fmt::format("{:.2f}", p.start_s), fmt::format("{:.2f}", p.end_s),
           std::to_string(p.count), Num(p.iter_ms_p50, 1), Num(p.iter_ms_p99, 1),
           Num(p.busbw_gbps_p50, 3), Num(p.busbw_gbps_mean, 3),
           p.slowdown ? Num(p.slowdown, 2) + "×" : kNone});
  }
  *out += t.Done();
}

// With tenants: each one's baseline and phases, and what each fault did to it.
void WriteWorkloads(const Summary& s, std::string* out) {
  if (s.workloads.empty()) return;
  *out +=
      "<h2>Workloads</h2>\n<p>Each tenant measured on its own iterations against its own "
      "baseline (the tables above are the first one's).</p>\n";
  Table w({"workload", "nodes", "ranks", "baseline busbw (GB/s)",
           "busbw p50 by phase (GB/s, "
           "slowdown)"},
          {false, false, true, true, false});
  for (const WorkloadStats& ws : s.workloads) {
    std::string nodes, phases;
    for (const auto& n : ws.nodes) nodes += (nodes.empty() ? "" : " ") + n;
    if (!ws.start.empty()) nodes += " (from " + ws.start + ")";
    for (const PhaseStats& p : ws.phases) {
      phases +=
          fmt::format("{}{} {}{}", phases.empty() ? "" : "; ", p.name, Num(p.busbw_gbps_p50, 3),
                      p.slowdown ? " (" + Num(p.slowdown, 2) + "×)" : "");
    }
    w.Row({Esc(ws.name), Esc(nodes), std::to_string(ws.ranks), Num(ws.baseline.busbw_median, 3),
           Esc(phases)});
  }
  *out += w.Done();
  Table t({"fault", "workload", "slowdown", "impact (s)", "recover (s)", "stall (ms)"},
          {false, false, true, true, true, true});
  for (const FaultStats& f : s.faults) {
    for (const WorkloadEffect& e : f.workloads) {
      t.Row({Esc(f.id), Esc(e.workload), e.slowdown ? Num(e.slowdown, 2) + "×" : kNone,
             Num(e.time_to_impact_s, 2), Num(e.time_to_recover_s, 2), Num(e.stall_ms, 1)});
    }
  }
  if (!s.faults.empty()) *out += t.Done();
}

void WriteFaults(const Summary& s, std::string* out) {
  *out += "<h2>Faults</h2>\n";
  if (s.faults.empty()) {
    *out += "<p>No fault was applied.</p>\n";
    return;
  }
  Table t({"fault", "kind", "node", "target", "applied (s)", "reverted (s)", "slowdown",
           "impact (s)", "recover (s)", "stall (ms)", "lost GPU·s", "culprit", "localised (s)"},
          {false, false, false, false, true, true, true, true, true, true, true, false, true});
  for (const FaultStats& f : s.faults) {
    std::string recover = Num(f.time_to_recover_s, 2);
    if (f.reverted_at_s && !f.time_to_recover_s)
      recover = f.reverted_under_another ? "overlapped" : "never";
    std::string slowdown = f.slowdown ? Num(f.slowdown, 2) + "×" : kNone;
    if (f.measured_over == "alone") slowdown += " alone";
    if (f.measured_over == "compound") slowdown += " shared";
    t.Row({Esc(f.id), Esc(f.kind), Esc(f.node), Esc(f.target),
           fmt::format("{:.2f}", f.applied_at_s), Num(f.reverted_at_s, 2), slowdown,
           f.applied_under_another ? "overlapped" : Num(f.time_to_impact_s, 2), recover,
           Num(f.stall_ms, 1), Num(f.lost_gpu_s, 1),
           f.localisation ? Esc(CulpritText(*f.localisation)) : kNone,
           Num(f.time_to_localise_s, 2)});
  }
  *out += t.Done();
  if (s.compound.empty()) return;
  // Faults in force together (reports/compound.h), as report.md lists them.
  *out +=
      "<h3>Faults in force together</h3>\n<p class=\"note\">An overlapped fault's numbers "
      "above come from the seconds it alone was in force (\"alone\"), else from the window it "
      "shared (\"shared\"); a window's lost GPU·s are counted there and in no fault's.</p>\n";
  Table w({"faults", "from (s)", "to (s)", "together (s)", "slowdown", "stall (ms)", "lost GPU·s",
           "shares", "culprits"},
          {false, true, true, true, true, true, true, false, false});
  for (const CompoundWindow& c : s.compound) {
    std::string shares, culprits;
    for (const FaultShare& sh : c.shares) {
      if (sh.share)
        shares +=
            fmt::format("{}{} {:.0f} %", shares.empty() ? "" : ", ", sh.fault, 100 * *sh.share);
    }
    shares = shares.empty() ? "not separable" : shares + " (" + c.share_basis + ")";
    for (const Culprit& k : c.culprits) culprits += (culprits.empty() ? "" : "; ") + CulpritText(k);
    w.Row({Esc(fmt::format("{}", fmt::join(c.faults, ", "))), fmt::format("{:.2f}", c.start_s),
           fmt::format("{:.2f}", c.end_s), fmt::format("{:.1f}", c.together_s),
           c.slowdown ? Num(c.slowdown, 2) + "×" : kNone, Num(c.stall_ms, 1), Num(c.lost_gpu_s, 1),
           Esc(shares), culprits.empty() ? kNone : Esc(culprits)});
  }
  *out += w.Done();
  if (s.lost_gpu_s) {
    *out += fmt::format("<p>Lost GPU·s in all, each second once: {:.1f}</p>\n", *s.lost_gpu_s);
  }
}

// Per fault: the culprit, its evidence in words and the fabric map; then
// every link over time; then the anomalies.
void WhereItHurt(const Summary& s, const RunData& run, std::string* out) {
  if (s.links.empty() && s.faults.empty() && s.anomalies.empty()) return;
  const CounterIndex counters(run.events);
  const FabricMapLinks map_links = MapLinks(s, run);
  *out += "<h2>Where it hurt</h2>\n";
  for (const FaultStats& f : s.faults) {
    *out += fmt::format("<h3>{} ({} on {})</h3>\n", Esc(f.id), Esc(f.kind), Esc(f.node));
    if (!f.localisation) {
      *out +=
          "<p>No element stood out: no link counter rose beyond its baseline rate, no rank "
          "arrived last, no node retransmitted.</p>\n";
    } else {
      *out += fmt::format(
          "<p>Culprit: <b>{}</b>{}</p>\n<ul>\n", Esc(CulpritText(*f.localisation)),
          f.time_to_localise_s
              ? fmt::format(", named live {:.2f} s after the apply", *f.time_to_localise_s)
              : "");
      for (const std::string& e : f.localisation->evidence) *out += "<li>" + Esc(e) + "</li>\n";
      *out += "</ul>\n";
    }
    *out += RenderFabricMap(s, run, counters, f, map_links);
  }
  double x_min = 0, x_max = 0;
  for (const PhaseStats& p : s.phases) x_max = std::max(x_max, p.end_s);
  if (!s.links.empty()) {
    *out +=
        "<h3>Links over time</h3>\n<p class=\"note\">Each link's send rate against its "
        "baseline: white nothing sent, blue as usual, red where its error or drop counters "
        "rose; fault windows in orange, anomalies dashed purple.</p>\n";
    *out += RenderHeatMap(s, counters, x_min, x_max);
  }
  *out += "<h3>Anomalies</h3>\n";
  if (s.anomalies.empty()) {
    *out +=
        "<p>none — no slowdown outside the drill's own faults that an element can be "
        "named for.</p>\n";
    return;
  }
  Table t({"from (s)", "to (s)", "iterations", "slowdown", "culprit", "evidence"},
          {true, true, true, true, false, false});
  for (const Anomaly& a : s.anomalies) {
    t.Row({fmt::format("{:.2f}", a.start_s), fmt::format("{:.2f}", a.end_s),
           std::to_string(a.iterations), a.slowdown ? Num(a.slowdown, 2) + "×" : kNone,
           Esc(CulpritText(a.culprit)),
           Esc(fmt::format("{}", fmt::join(a.culprit.evidence, "; ")))});
  }
  *out += t.Done();
}

// Per link and phase (the links with the most evidence first): what it
// sent and received and what its counters saw; raw deltas in summary.json.
void WriteLinks(const Summary& s, std::string* out) {
  if (s.links.empty()) return;
  *out += "<h2>Links</h2>\n";
  const std::vector<const LinkStats*> top = TopLinks(s, kHeatMapMaxLinks);
  Table t({"link", "phase", "tx Gbit/s", "rx Gbit/s", "utilisation", "drops", "errors", "shaped",
           "carrier changes"},
          {false, false, true, true, true, true, true, true, true});
  for (const LinkStats* l : top) {
    for (const LinkPhase& p : l->phases) {
      t.Row({Esc(l->node + " " + l->link), Esc(p.phase), Num(p.tx_gbps, 3), Num(p.rx_gbps, 3),
             p.utilisation ? fmt::format("{:.0f} %", 100 * *p.utilisation) : kNone,
             fmt::format("{:g}", p.drops), fmt::format("{:g}", p.errors),
             fmt::format("{:g}", p.shaped), fmt::format("{:g}", p.carrier_changes)});
    }
  }
  *out += t.Done();
  if (top.size() < s.links.size()) {
    *out +=
        fmt::format("<p class=\"note\">{} of {} links shown.</p>\n", top.size(), s.links.size());
  }
  if (!s.transport.empty()) {
    Table tt({"node", "phase", "TCP retransmitted segments", "retransmit timeouts"},
             {false, false, true, true});
    for (const NodeTransport& n : s.transport) {
      for (const TransportPhase& p : n.phases) {
        tt.Row({Esc(n.node), Esc(p.phase), fmt::format("{:g}", p.retrans_segs),
                fmt::format("{:g}", p.timeouts)});
      }
    }
    *out += "<h3>Transport</h3>\n" + tt.Done();
  }
}

void WriteRest(const Summary& s, std::string* out) {
  const Rollback& r = s.rollback;
  *out += fmt::format(
      "<h2>Rollback</h2>\n<ul><li>restarts: {}</li><li>iterations lost: {}</li>"
      "<li>data intact: {}</li></ul>\n",
      r.restarts, r.iterations_lost,
      r.data_intact ? std::string("yes") : fmt::format("no ({} wrong elements)", r.wrong_elements));

  *out += "<h2>Expectations</h2>\n";
  if (s.expectations.empty()) {
    *out += "<p>No expectations were set.</p>\n";
  } else {
    Table t({"expectation", "limit", "measured", "result"}, {false, true, true, false});
    for (const ExpectationResult& e : s.expectations) {
      t.Row({Esc(e.name), Value(e.limit), Value(e.measured),
             e.pass ? "<span class=\"PASS\">PASS</span>" : "<span class=\"FAIL\">FAIL</span>"});
    }
    *out += t.Done();
  }

  if (!s.slurm.empty()) {
    *out += "<h2>What Slurm did</h2>\n<ul>\n";
    for (const SlurmChange& c : s.slurm) *out += "<li>" + Esc(SlurmChangeText(c)) + "</li>\n";
    *out += "</ul>\n";
  }

  if (!s.agents_lost.empty()) {
    *out += "<h2>Agents lost</h2>\n<ul>\n";
    for (const AgentLoss& a : s.agents_lost) {
      *out += "<li>" + Esc(AgentLossText(a));
      if (!a.faults_left.empty()) {
        *out += "\n<ul>\n";
        for (const LeftFault& f : a.faults_left)
          *out += "<li>" + Esc(LeftFaultText(a, f)) + "</li>\n";
        *out += "</ul>\n";
      }
      *out += "</li>\n";
    }
    *out += "</ul>\n";
  }

  *out += "<h2>Residue</h2>\n";
  if (!s.residue_checked) {
    *out += "<p>not checked — the residue check did not run.</p>\n";
  } else if (s.residue.empty()) {
    *out += "<p>none — the fabric was left as found.</p>\n";
  } else {
    Table t({"node", "object", "before", "after"}, {});
    for (const ResidueItem& i : s.residue) {
      t.Row({Esc(i.node), Esc(i.object), Esc(i.before), Esc(i.after)});
    }
    *out += t.Done();
  }

  *out += "<h2>Errors</h2>\n";
  if (s.errors.empty())
    *out += "<p>none</p>\n";
  else {
    *out += "<ul>\n";
    for (const std::string& e : s.errors) *out += "<li>" + Esc(e) + "</li>\n";
    *out += "</ul>\n";
  }
}

}  // namespace

std::string RenderHtml(const Summary& s, const RunData& run, const HtmlOptions& options) {
  const std::string name = s.name.empty() ? "unnamed drill" : s.name;
  const char* verdict = VerdictName(s.verdict);
  std::string upper = verdict;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string out;
  out.reserve(1 << 20);
  // rel=icon data: keeps the browser from asking for /favicon.ico.
  fmt::format_to(std::back_inserter(out),
                 "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                 "<link rel=\"icon\" href=\"data:,\">\n<title>fdrill report: {0} — {1}</title>\n"
                 "{2}</head>\n<body>\n<h1>fdrill report: {0} <span class=\"badge {3}\">{1}</span>"
                 "</h1>\n",
                 Esc(name), upper, kStyle, verdict);
  const auto failed = std::count_if(s.expectations.begin(), s.expectations.end(),
                                    [](const ExpectationResult& e) { return !e.pass; });
  switch (s.verdict) {
    case Verdict::kPass:
      out += fmt::format("<p><b>pass</b>: all {} expectations met.</p>\n", s.expectations.size());
      break;
    case Verdict::kFail:
      out += fmt::format("<p><b>fail</b>: {} of {} expectations missed.</p>\n", failed,
                         s.expectations.size());
      break;
    case Verdict::kError:
      out += "<p><b>error</b>: the harness could not run the drill as planned; see Errors.</p>\n";
      break;
  }
  const Baseline& b = s.baseline;
  out += fmt::format(
      "<p>Baseline measured on {} ({} iterations): median busbw {} GB/s, MAD {} GB/s, band low "
      "{} GB/s.</p>\n",
      Esc(b.phase), b.count, Num(b.busbw_median, 3), Num(b.mad, 3), Num(b.band_low, 3));
  WriteHtmlCharts(s, run, options, &out);
  WritePhases(s, &out);
  WriteFaults(s, &out);
  WhereItHurt(s, run, &out);
  WriteWorkloads(s, &out);
  WriteLinks(s, &out);
  WriteRest(s, &out);
  out += "</body></html>\n";
  return out;
}

}  // namespace fdrill

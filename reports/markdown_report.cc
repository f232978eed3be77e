#include "reports/markdown_report.h"

#include <algorithm>
#include <cctype>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/agent_loss.h"
#include "reports/cell_text.h"
#include "reports/compound.h"
#include "reports/link_stats.h"
#include "reports/slurm_changes.h"

namespace fdrill {

namespace {

constexpr const char* kNone = kNoValue;

std::string Num(const std::optional<double>& x, int decimals) { return CellNumber(x, decimals); }
std::string Value(const ExpectValue& v) { return CellExpectValue(v); }

// A table cell: pipes escaped, line breaks flattened.
std::string Cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += (c == '\n' || c == '\r') ? ' ' : c;
    }
  }
  return out.empty() ? kNone : out;
}

void WriteHeadline(const Summary& s, std::string* out) {
  std::string verdict = VerdictName(s.verdict);
  for (char& c : verdict) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  fmt::format_to(std::back_inserter(*out), "# fdrill report: {} — {}\n\n",
                 s.name.empty() ? "unnamed drill" : s.name, verdict);
  const auto failed = std::count_if(s.expectations.begin(), s.expectations.end(),
                                    [](const ExpectationResult& e) { return !e.pass; });
  switch (s.verdict) {
    case Verdict::kPass:
      fmt::format_to(std::back_inserter(*out), "**pass**: all {} expectations met.\n\n",
                     s.expectations.size());
      break;
    case Verdict::kFail:
      fmt::format_to(std::back_inserter(*out), "**fail**: {} of {} expectations missed.\n\n",
                     failed, s.expectations.size());
      break;
    case Verdict::kError:
      *out += "**error**: the harness could not run the drill as planned; see Errors.\n\n";
      break;
  }
  if (s.stopped && s.stopped->rfind("the job finished", 0) == 0) {
    fmt::format_to(std::back_inserter(*out), "**Ended with the job:** {}.\n\n", *s.stopped);
  } else if (s.stopped) {
    fmt::format_to(std::back_inserter(*out), "**Stopped early:** {} — everything was reverted.\n\n",
                   *s.stopped);
  }
}

void WriteBaseline(const Summary& s, std::string* out) {
  const Baseline& b = s.baseline;
  const char* unit = s.rate_unit.c_str();
  fmt::format_to(std::back_inserter(*out),
                 "## Baseline\n\nMeasured on {} ({} {}): median {} {} {}, "
                 "MAD {} {}, band low {} {}.\n\n",
                 b.phase, b.count, s.Steps() ? "steps" : "iterations", s.RateName(),
                 Num(b.busbw_median, 3), unit, Num(b.mad, 3), unit, Num(b.band_low, 3), unit);
  if (s.Steps()) {
    *out +=
        "The workload is a job of its own: its rate is steps per second, read from its step "
        "lines (workload.metrics), and each slowdown is its step time's.\n\n";
  }
}

void WritePhases(const Summary& s, std::string* out) {
  *out += "## Phases\n\n";
  if (s.phases.empty()) {
    *out += "No phase events were recorded.\n\n";
    return;
  }
  fmt::format_to(std::back_inserter(*out),
                 "| phase | start (s) | end (s) | {} | {} p50 (ms) | {} p99 (ms) | "
                 "{} median ({}) | {} time-weighted ({}) | slowdown (time-weighted) |\n"
                 "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
                 s.Steps() ? "steps" : "iterations", s.Steps() ? "step" : "iter",
                 s.Steps() ? "step" : "iter", s.RateName(), s.rate_unit, s.RateName(), s.rate_unit);
  for (const PhaseStats& p : s.phases) {
    fmt::format_to(std::back_inserter(*out),
                   "| {} | {:.2f} | {:.2f} | {} | {} | {} | {} | {} | {} |\n", Cell(p.name),
                   p.start_s, p.end_s, p.count, Num(p.iter_ms_p50, 1), Num(p.iter_ms_p99, 1),
                   Num(p.busbw_gbps_p50, 3), Num(p.busbw_gbps_mean, 3),
                   p.slowdown ? Num(p.slowdown, 2) + "×" : kNone);
  }
  *out += "\n";
}

// Faults in force together: what each overlapped fault was measured over,
// and each compound window's own numbers (reports/compound.h).
void WriteCompound(const Summary& s, std::string* out) {
  if (s.compound.empty()) return;
  *out += fmt::format(
      "\nFaults in force together. An overlapped fault's numbers above come from the seconds it "
      "alone was in force ({:g} s at least), else from the window it shared; a window's lost "
      "GPU·s are counted there and in no fault's:\n\n",
      kMinAloneS);
  for (const FaultStats& f : s.faults) {
    if (f.overlapped_with.empty()) continue;
    const std::string with = fmt::format("{}", fmt::join(f.overlapped_with, ", "));
    if (f.measured_over == "alone") {
      fmt::format_to(std::back_inserter(*out),
                     "- {}: overlapped {}; measured over the {:.1f} s it was alone\n", Cell(f.id),
                     Cell(with), f.alone_s.value_or(0));
    } else {
      fmt::format_to(std::back_inserter(*out),
                     "- {}: overlapped {}; never alone long enough, so its slowdown is the "
                     "window's and its culprit what its kind's evidence names there\n",
                     Cell(f.id), Cell(with));
    }
  }
  *out +=
      "\n| faults | from (s) | to (s) | together (s) | slowdown | stall (ms) | lost GPU·s | "
      "shares | culprits |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const CompoundWindow& w : s.compound) {
    std::string shares;
    for (const FaultShare& sh : w.shares) {
      if (!sh.share) continue;
      shares += fmt::format("{}{} {:.0f} %", shares.empty() ? "" : ", ", sh.fault, 100 * *sh.share);
    }
    if (shares.empty()) {
      shares = "not separable";
    } else {
      shares += " (" + w.share_basis + ")";
    }
    std::string culprits;
    for (const Culprit& c : w.culprits)
      culprits += (culprits.empty() ? "" : "; ") + c.element + " (" + c.confidence + ")";
    fmt::format_to(std::back_inserter(*out),
                   "| {} | {:.2f} | {:.2f} | {:.1f} | {} | {} | {} | {} | {} |\n",
                   Cell(fmt::format("{}", fmt::join(w.faults, ", "))), w.start_s, w.end_s,
                   w.together_s, w.slowdown ? Num(w.slowdown, 2) + "×" : kNone, Num(w.stall_ms, 1),
                   Num(w.lost_gpu_s, 1), Cell(shares), Cell(culprits.empty() ? kNone : culprits));
  }
  if (s.lost_gpu_s) {
    fmt::format_to(std::back_inserter(*out), "\nLost GPU·s in all, each second once: {:.1f}\n",
                   *s.lost_gpu_s);
  }
}

void WriteFaults(const Summary& s, std::string* out) {
  *out += "## Faults\n\n";
  if (s.faults.empty()) {
    *out += "No fault was applied.\n\n";
    return;
  }
  *out +=
      "| fault | kind | node | target | applied (s) | reverted (s) | slowdown | impact (s) | "
      "recover (s) | stall (ms) | lost GPU·s | culprit | localised (s) |\n"
      "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|\n";
  for (const FaultStats& f : s.faults) {
    std::string recover = Num(f.time_to_recover_s, 2);
    if (f.reverted_at_s && !f.time_to_recover_s)
      recover = f.reverted_under_another ? "overlapped" : "never";
    const std::string impact = f.applied_under_another ? "overlapped" : Num(f.time_to_impact_s, 2);
    const std::string culprit =
        f.localisation ? f.localisation->element + " (" + f.localisation->confidence + ")" : kNone;
    fmt::format_to(std::back_inserter(*out),
                   "| {} | {} | {} | {} | {:.2f} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                   Cell(f.id), Cell(f.kind), Cell(f.node), Cell(f.target), f.applied_at_s,
                   Num(f.reverted_at_s, 2), f.slowdown ? Num(f.slowdown, 2) + "×" : kNone, impact,
                   recover, Num(f.stall_ms, 1), Num(f.lost_gpu_s, 1), Cell(culprit),
                   Num(f.time_to_localise_s, 2));
  }
  WriteCompound(s, out);
  *out += "\nWhere it hurt (the evidence for each culprit):\n\n";
  for (const FaultStats& f : s.faults) {
    if (!f.localisation) {
      fmt::format_to(std::back_inserter(*out), "- {}: no element stood out\n", Cell(f.id));
      continue;
    }
    fmt::format_to(std::back_inserter(*out), "- {}: {} — {}\n", Cell(f.id),
                   Cell(f.localisation->element),
                   Cell(fmt::format("{}", fmt::join(f.localisation->evidence, "; "))));
  }
  *out +=
      "\nPer rank while each fault was on (medians: time inside the collective / wait in the "
      "line-up "
      "before it, ms):\n\n";
  for (const FaultStats& f : s.faults) {
    std::string ranks;
    for (const RankBreakdown& r : f.ranks) {
      ranks += fmt::format("{}rank {} ({}) {:.1f} / {:.1f}", ranks.empty() ? "" : "; ", r.rank,
                           r.node, r.time_ms_p50, r.wait_ms_p50);
    }
    fmt::format_to(std::back_inserter(*out), "- {}: {}\n", Cell(f.id),
                   ranks.empty() ? kNone : ranks);
  }
  *out += "\n";
}

// With tenants: each one's baseline and what every fault did to it.
void WriteWorkloads(const Summary& s, std::string* out) {
  if (s.workloads.empty()) return;
  *out +=
      "## Workloads\n\nEach tenant measured on its own iterations against its own baseline "
      "(the tables above are the first one's).\n\n| workload | nodes | ranks | baseline busbw "
      "(GB/s) | busbw p50 by phase (GB/s, slowdown) |\n|---|---|---:|---:|---|\n";
  for (const WorkloadStats& w : s.workloads) {
    std::string nodes;
    for (const auto& n : w.nodes) nodes += (nodes.empty() ? "" : " ") + n;
    std::string phases;
    for (const PhaseStats& p : w.phases) {
      phases +=
          fmt::format("{}{} {}{}", phases.empty() ? "" : "; ", p.name, Num(p.busbw_gbps_p50, 3),
                      p.slowdown ? " (" + Num(p.slowdown, 2) + "×)" : "");
    }
    fmt::format_to(std::back_inserter(*out), "| {} | {} | {} | {} | {} |\n", Cell(w.name),
                   Cell(nodes) + (w.start.empty() ? "" : " (from " + w.start + ")"), w.ranks,
                   Num(w.baseline.busbw_median, 3), Cell(phases));
  }
  *out +=
      "\n| fault | workload | slowdown | impact (s) | recover (s) | stall (ms) |\n"
      "|---|---|---:|---:|---:|---:|\n";
  for (const FaultStats& f : s.faults) {
    for (const WorkloadEffect& w : f.workloads) {
      fmt::format_to(std::back_inserter(*out), "| {} | {} | {} | {} | {} | {} |\n", Cell(f.id),
                     Cell(w.workload), w.slowdown ? Num(w.slowdown, 2) + "×" : kNone,
                     Num(w.time_to_impact_s, 2), Num(w.time_to_recover_s, 2), Num(w.stall_ms, 1));
    }
  }
  *out += "\n";
}

void WriteRollback(const Summary& s, std::string* out) {
  const Rollback& r = s.rollback;
  fmt::format_to(
      std::back_inserter(*out),
      "## Rollback\n\n- restarts: {}\n- iterations lost: {}\n- data intact: {}\n- effective "
      "time after the baseline (ETTR): {}\n\n",
      r.restarts, r.iterations_lost,
      r.data_intact ? std::string("yes") : fmt::format("no ({} wrong elements)", r.wrong_elements),
      Num(s.ettr, 3));
  if (r.digest_steps && !r.digest_tolerance) {
    fmt::format_to(std::back_inserter(*out),
                   "Final digest after {} steps: {} — fault-free reference: {} ({}).\n\n",
                   *r.digest_steps, r.digest.value_or("none printed"),
                   r.expected_digest.value_or("not computed"),
                   r.digest_intact ? "equal" : "NOT equal");
  } else if (r.digest_steps) {
    fmt::format_to(std::back_inserter(*out),
                   "Final {} after {} steps: {} — fault-free reference: {} (relative difference "
                   "{}; {} the stated tolerance {:g}).\n\n",
                   r.digest_key, *r.digest_steps, r.digest.value_or("none printed"),
                   r.expected_digest.value_or("not computed"),
                   r.digest_difference ? fmt::format("{:.3g}", *r.digest_difference) : "none",
                   r.digest_intact ? "within" : "NOT within", *r.digest_tolerance);
  }
  if (r.failures.empty()) return;
  *out +=
      "| failed at (s) | cause | after fault | detect (s) | restart (s) | resumed at step | steps "
      "redone | back in band (s) |\n"
      "|---:|---|---|---:|---:|---:|---:|---:|\n";
  for (const RestartStats& f : r.failures) {
    fmt::format_to(
        std::back_inserter(*out), "| {:.2f} | {} | {} | {} | {} | {} | {} | {} |\n", f.failed_at_s,
        Cell(f.cause + ": " + f.reason), Cell(f.fault.value_or("-")), Num(f.time_to_detect_s, 3),
        Num(f.time_to_restart_s, 3), f.resumed_step ? std::to_string(*f.resumed_step) : "-",
        f.iterations_lost ? std::to_string(*f.iterations_lost) : "-", Num(f.back_in_band_s, 3));
  }
  *out += "\n";
}

void WriteAnomalies(const Summary& s, std::string* out) {
  *out += "## Anomalies\n\n";
  if (s.anomalies.empty()) {
    *out +=
        "none — no slowdown outside the drill's own faults that an element can be named for.\n\n";
    return;
  }
  *out +=
      "| from (s) | to (s) | iterations | slowdown | culprit | evidence "
      "|\n|---:|---:|---:|---:|---|---|\n";
  for (const Anomaly& a : s.anomalies) {
    fmt::format_to(std::back_inserter(*out), "| {:.2f} | {:.2f} | {} | {} | {} | {} |\n", a.start_s,
                   a.end_s, a.iterations, a.slowdown ? Num(a.slowdown, 2) + "×" : kNone,
                   Cell(a.culprit.element + " (" + a.culprit.confidence + ")"),
                   Cell(fmt::format("{}", fmt::join(a.culprit.evidence, "; "))));
  }
  *out += "\n";
}

// Only when counters were sampled: the links that matter most (TopLinks),
// each with its send rate by phase and what its counters saw; every link
// and raw counter is in summary.json.
void WriteLinks(const Summary& s, std::string* out) {
  if (s.links.empty()) return;
  *out += "## Links\n\n";
  const std::vector<const LinkStats*> top = TopLinks(s, kMarkdownTopLinks);
  fmt::format_to(std::back_inserter(*out),
                 "The {} of {} links with the most drops, errors and carrier changes, then the "
                 "busiest (all in summary.json `links`).\n\n| link | tx Gbit/s by phase | drops | "
                 "errors | shaped | carrier changes | node's TCP retransmits |\n"
                 "|---|---|---:|---:|---:|---:|---:|\n",
                 top.size(), s.links.size());
  for (const LinkStats* l : top) {
    std::string by_phase;
    double drops = 0, errors = 0, shaped = 0, carrier = 0;
    for (const LinkPhase& p : l->phases) {
      if (p.tx_gbps) {
        by_phase += fmt::format("{}{} {:.3g}", by_phase.empty() ? "" : ", ", p.phase, *p.tx_gbps);
      }
      drops += p.drops;
      errors += p.errors;
      shaped += p.shaped;
      carrier += p.carrier_changes;
    }
    double retrans = 0;
    for (const NodeTransport& n : s.transport) {
      if (n.node != l->node) continue;
      for (const TransportPhase& p : n.phases) retrans += p.retrans_segs;
    }
    fmt::format_to(std::back_inserter(*out), "| {} {} | {} | {:g} | {:g} | {:g} | {:g} | {:g} |\n",
                   Cell(l->node), Cell(l->link), by_phase.empty() ? kNone : Cell(by_phase), drops,
                   errors, shaped, carrier, retrans);
  }
  *out += "\n";
}

void WriteExpectations(const Summary& s, std::string* out) {
  *out += "## Expectations\n\n";
  if (s.expectations.empty()) {
    *out += "No expectations were set.\n\n";
    return;
  }
  *out += "| expectation | limit | measured | result |\n|---|---:|---:|---|\n";
  for (const ExpectationResult& e : s.expectations) {
    fmt::format_to(std::back_inserter(*out), "| {} | {} | {} | {} |\n", Cell(e.name),
                   Value(e.limit), Value(e.measured), e.pass ? "PASS" : "**FAIL**");
  }
  *out += "\n";
}

// Only when an agent was lost: what it left applied, and whether its
// restarted self's journal sweep reverted that, and when.
void WriteAgentsLost(const Summary& s, std::string* out) {
  if (s.agents_lost.empty()) return;
  *out += "## Agents lost\n\n";
  for (const AgentLoss& a : s.agents_lost) {
    *out += "- " + AgentLossText(a) + "\n";
    for (const LeftFault& f : a.faults_left) *out += "  - " + LeftFaultText(a, f) + "\n";
  }
  *out += "\n";
}

// Only on a Slurm fabric: what Slurm said of the drill's nodes and job.
void WriteSlurm(const Summary& s, std::string* out) {
  if (s.slurm.empty()) return;
  *out += "## What Slurm did\n\n";
  for (const SlurmChange& c : s.slurm) *out += "- " + SlurmChangeText(c) + "\n";
  *out += "\n";
}

void WriteResidue(const Summary& s, std::string* out) {
  *out += "## Residue\n\n";
  if (!s.residue_checked) {
    *out += "not checked — the residue check did not run.\n\n";
    return;
  }
  if (s.residue.empty()) {
    *out += "none — the fabric was left as found.\n\n";
    return;
  }
  *out += "| node | object | before | after |\n|---|---|---|---|\n";
  for (const ResidueItem& r : s.residue) {
    fmt::format_to(std::back_inserter(*out), "| {} | {} | {} | {} |\n", Cell(r.node),
                   Cell(r.object), Cell(r.before), Cell(r.after));
  }
  *out += "\n";
}

void WriteErrors(const Summary& s, std::string* out) {
  *out += "## Errors\n\n";
  if (s.errors.empty()) *out += "none\n";
  for (const std::string& e : s.errors) *out += "- " + e + "\n";
}

}  // namespace

std::string RenderMarkdown(const Summary& summary) {
  std::string out;
  WriteHeadline(summary, &out);
  WriteBaseline(summary, &out);
  WritePhases(summary, &out);
  WriteFaults(summary, &out);
  WriteWorkloads(summary, &out);
  WriteRollback(summary, &out);
  WriteAnomalies(summary, &out);
  WriteLinks(summary, &out);
  WriteExpectations(summary, &out);
  WriteAgentsLost(summary, &out);
  WriteSlurm(summary, &out);
  WriteResidue(summary, &out);
  WriteErrors(summary, &out);
  return out;
}

}  // namespace fdrill

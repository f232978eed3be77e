#include "reports/brief.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/cell_text.h"

namespace fdrill {

namespace {

std::string Times(const std::optional<double>& x) {
  return x ? fmt::format("{:.2f}x", *x) : std::string(kNoValue);
}

std::string Seconds(const std::optional<double>& x) {
  return x ? fmt::format("{:.3f} s", *x) : std::string("not recovered");
}

}  // namespace

std::string BriefText(const Summary& s, const std::string& dir) {
  std::string out =
      fmt::format("fdrill: {} — verdict {} (exit {})\n", s.name.empty() ? "drill" : s.name,
                  VerdictName(s.verdict), ExitCodeForVerdict(s.verdict));
  if (s.baseline.busbw_median && s.Steps()) {
    out +=
        fmt::format("  baseline: {:.3f} steps/s ({:.1f} ms a step) median over {} steps\n",
                    *s.baseline.busbw_median, 1000.0 / *s.baseline.busbw_median, s.baseline.count);
  } else if (s.baseline.busbw_median) {
    out += fmt::format("  baseline: busbw {:.3f} GB/s median over {} iterations\n",
                       *s.baseline.busbw_median, s.baseline.count);
  }
  if (!s.faults.empty()) {
    out += fmt::format("  {:<16} {:<14} {:<6} {:>16} {:>15}  {}\n", "fault", "kind", "node",
                       "slowdown", "recovered in", "culprit");
    for (const FaultStats& f : s.faults) {
      std::string recovered = f.job_failed_after_s
                                  ? fmt::format("job failed {:.1f} s", *f.job_failed_after_s)
                                  : Seconds(f.time_to_recover_s);
      // Overlapped: "alone" marks numbers from its time alone, "shared"
      // the compound window's (listed below).
      std::string slowdown = Times(f.slowdown);
      if (f.measured_over == "alone") slowdown += " alone";
      if (f.measured_over == "compound") slowdown += " shared";
      out +=
          fmt::format("  {:<16} {:<14} {:<6} {:>16} {:>15}  {}\n", f.id, f.kind, f.node, slowdown,
                      recovered, f.localisation ? f.localisation->element : std::string(kNoValue));
    }
    for (const CompoundWindow& w : s.compound) {
      std::string shares;
      for (const FaultShare& sh : w.shares) {
        if (sh.share) shares += fmt::format(", {} {:.0f} %", sh.fault, 100 * *sh.share);
      }
      out += fmt::format("  in force together {:.1f}-{:.1f} s: {} — {} shared{}{}\n", w.start_s,
                         w.end_s, fmt::format("{}", fmt::join(w.faults, " + ")), Times(w.slowdown),
                         w.lost_gpu_s ? fmt::format(", {:.1f} lost GPU·s", *w.lost_gpu_s) : "",
                         shares);
    }
  }
  if (s.residue_checked) {
    out += s.residue.empty()
               ? std::string("  fabric: left as found (residue check: nothing left)\n")
               : fmt::format("  fabric: NOT as found: {} item(s) differ (report.md, Residue)\n",
                             s.residue.size());
  }
  out += fmt::format("  data: {}", s.rollback.data_intact ? "intact"
                                                          : fmt::format("{} wrong elements",
                                                                        s.rollback.wrong_elements));
  if (s.rollback.restarts > 0) out += fmt::format(", {} restart(s)", s.rollback.restarts);
  out += "\n";
  for (const ExpectationResult& e : s.expectations) {
    if (e.pass) continue;
    out += fmt::format("  expectation failed: {} (limit {}, measured {})\n", e.name,
                       CellExpectValue(e.limit), CellExpectValue(e.measured));
  }
  // A job that ran to its own end ended the drill: not a stop.
  if (s.stopped && s.stopped->rfind("the job finished", 0) == 0) {
    out += "  ended with the job: " + *s.stopped + "\n";
  } else if (s.stopped) {
    out += "  stopped early: " + *s.stopped + "\n";
  }
  // One screen: the first few errors; report.md has every one.
  constexpr size_t kErrorsShown = 3;
  for (size_t i = 0; i < s.errors.size() && i < kErrorsShown; ++i) {
    out += "  error: " + s.errors[i] + "\n";
  }
  if (s.errors.size() > kErrorsShown) {
    out += fmt::format("  ({} more errors in report.md)\n", s.errors.size() - kErrorsShown);
  }
  out += fmt::format("  report: {}/report.md (also report.html, summary.json, junit.xml)\n", dir);
  return out;
}

}  // namespace fdrill

// The renderings of a Comparison: Markdown for people, JSON for scripts,
// HTML (one file, no scripts) and JUnit for CI dashboards.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/compare.h"
#include "reports/xml_text.h"

namespace fdrill {

namespace {

using Json = nlohmann::ordered_json;

constexpr char kNone[] = "—";

std::string Num(const std::optional<double>& x, int decimals = 3) {
  return x ? fmt::format("{:.{}f}", *x, decimals) : kNone;
}

std::string Cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out.empty() ? kNone : out;
}

// 6 significant digits, as summary.json.
Json Number(const std::optional<double>& x) {
  if (!x || !std::isfinite(*x)) return nullptr;
  const std::string text = fmt::format("{:.6g}", *x);
  double rounded = *x;
  std::from_chars(text.data(), text.data() + text.size(), rounded);
  return rounded;
}

std::string Label(const CompareSide& s) {
  std::string what =
      s.campaign ? fmt::format("campaign of {} run{}", s.runs, s.runs == 1 ? "" : "s") : "one run";
  if (s.dir.empty()) return fmt::format("{} ({})", s.name.empty() ? "unnamed" : s.name, what);
  return s.name.empty() ? fmt::format("{} ({})", s.dir, what)
                        : fmt::format("{} ({}, {})", s.dir, s.name, what);
}

const char* BetterName(Better b) {
  return b == Better::kHigher ? "higher" : b == Better::kLower ? "lower" : "neither";
}

std::string Interval(const CompareRow& r) {
  return r.ci_low ? fmt::format("{:.3f}–{:.3f}", *r.ci_low, *r.ci_high) : kNone;
}

// The verdict with what it needs: "not enough runs (5 a side would decide)".
std::string VerdictText(const CompareRow& r) {
  std::string v = CompareVerdictName(r.verdict);
  if (r.verdict == CompareVerdict::kNotEnoughRuns && r.runs_needed)
    v += fmt::format(" ({} a side would decide)", *r.runs_needed);
  if (!r.note.empty()) v += " (" + r.note + ")";
  return v;
}

std::string Method(const CompareOptions& o) {
  return fmt::format(
      "Per metric, B/A with a {:g} % Welch t interval over runs (one run a side: busbw over "
      "{} batches of consecutive iterations, since iterations are autocorrelated, deciding "
      "only with --run-spread{}). Regression "
      "or improvement: the whole interval beyond 1 ∓ threshold on the worse or better side; no "
      "change: the ratio within 1 ± threshold (a note when the interval reaches past it); not "
      "enough runs: the ratio past a threshold, the interval not wholly. Thresholds: busbw {:g} %, "
      "a fault's slowdown, times, stall and GPU·s lost "
      "{:g} %.",
      o.confidence * 100, o.batches,
      o.run_spread > 0 ? fmt::format(", here {:g} %", o.run_spread * 100) : "", o.threshold * 100,
      o.time_threshold * 100);
}

struct Counts {
  int regressed = 0, improved = 0, undecided = 0;
};
Counts Count(const Comparison& c) {
  Counts n;
  for (const CompareRow& r : c.rows) {
    if (r.verdict == CompareVerdict::kRegression) ++n.regressed;
    if (r.verdict == CompareVerdict::kImprovement) ++n.improved;
    if (r.verdict == CompareVerdict::kNotEnoughRuns || r.verdict == CompareVerdict::kNotCompared)
      ++n.undecided;
  }
  return n;
}

std::string Conclusion(const Comparison& c) {
  const Counts n = Count(c);
  return fmt::format("{}: {} of {} metrics regressed, {} improved, {} undecided.",
                     CompareVerdictName(c.overall), n.regressed, c.rows.size(), n.improved,
                     n.undecided);
}

}  // namespace

std::string RenderCompareMarkdown(const Comparison& c) {
  std::string out;
  auto w = std::back_inserter(out);
  fmt::format_to(w, "# fdrill compare — {}\n\n- A: {}\n- B: {}\n\n", CompareVerdictName(c.overall),
                 Label(c.a), Label(c.b));
  // What changed comes before what it did.
  if (!c.fingerprinted) {
    out +=
        "What the nodes ran: not recorded by both sides (inventory.json without "
        "`software`: an older fdrill, or no inventory), so this cannot say what changed.\n\n";
  } else if (c.differences.empty()) {
    out +=
        "What the nodes ran: the same in both (kernel, drivers, HCA firmware, MTUs, transport "
        "sysctls, fdrill).\n\n";
  } else {
    out += "## What differs\n\n| | A | B |\n|---|---|---|\n";
    for (const FingerprintDifference& d : c.differences)
      fmt::format_to(w, "| {} | {} | {} |\n", Cell(d.key), Cell(d.a), Cell(d.b));
    out += "\n";
  }
  for (const std::string& warning : c.warnings) fmt::format_to(w, "**Note**: {}\n\n", warning);
  out += Method(c.options) + "\n\n";
  if (c.rows.empty()) {
    out += "No metric was measured by either side.\n";
    return out;
  }
  out +=
      "| metric | | unit | better | basis | n A | n B | A | B | B/A | interval | verdict |\n"
      "|---|---|---|---|---|---:|---:|---:|---:|---:|---|---|\n";
  for (const CompareRow& r : c.rows) {
    std::string verdict = VerdictText(r);
    if (r.verdict == CompareVerdict::kRegression) verdict = "**" + verdict + "**";
    fmt::format_to(w, "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                   Cell(r.group), Cell(r.metric), r.unit, BetterName(r.better), r.basis, r.n_a,
                   r.n_b, Num(r.a), Num(r.b), Num(r.ratio), Interval(r), verdict);
  }
  fmt::format_to(w, "\n**{}**\n", Conclusion(c));
  return out;
}

std::string RenderCompareJson(const Comparison& c) {
  const CompareOptions& o = c.options;
  Json j;
  j["verdict"] = CompareVerdictName(c.overall);
  for (const auto& [key, s] : {std::pair{"a", &c.a}, std::pair{"b", &c.b}})
    j[key] = {{"dir", s->dir}, {"name", s->name}, {"campaign", s->campaign}, {"runs", s->runs}};
  j["method"] = {{"interval", "welch t, ratio of means (log scale when every value is positive)"},
                 {"threshold", o.threshold},
                 {"time_threshold", o.time_threshold},
                 {"confidence", o.confidence},
                 {"batches", o.batches},
                 {"run_spread", o.run_spread > 0 ? Json(o.run_spread) : Json(nullptr)}};
  j["fingerprinted"] = c.fingerprinted;
  j["differences"] = Json::array();
  for (const FingerprintDifference& d : c.differences)
    j["differences"].push_back({{"key", d.key}, {"a", d.a}, {"b", d.b}});
  j["warnings"] = c.warnings;
  j["rows"] = Json::array();
  for (const CompareRow& r : c.rows) {
    Json row = {{"group", r.group},
                {"metric", r.metric},
                {"unit", r.unit},
                {"better", BetterName(r.better)},
                {"basis", r.basis}};
    if (r.group == "busbw") {
      row["op"] = r.op;
      row["bytes"] = r.bytes;
      row["phase"] = r.phase;
    }
    row.update(Json{{"n_a", r.n_a},
                    {"n_b", r.n_b},
                    {"a", Number(r.a)},
                    {"b", Number(r.b)},
                    {"ratio", Number(r.ratio)},
                    {"ci_low", Number(r.ci_low)},
                    {"ci_high", Number(r.ci_high)},
                    {"threshold", r.threshold},
                    {"spread", Number(r.spread)},
                    {"verdict", CompareVerdictName(r.verdict)},
                    {"runs_needed", r.runs_needed ? Json(*r.runs_needed) : Json(nullptr)}});
    if (!r.note.empty()) row["note"] = r.note;
    j["rows"].push_back(std::move(row));
  }
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string RenderCompareHtml(const Comparison& c) {
  std::string out;
  auto w = std::back_inserter(out);
  auto e = [](const std::string& s) { return EscapeXml(s); };
  fmt::format_to(w,
                 "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                 "<title>fdrill compare — {}</title><style>"
                 "body{{font-family:sans-serif;margin:2em;max-width:80em}}"
                 "table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2em .5em;"
                 "text-align:left}}td.n{{text-align:right}}tr.regression{{background:#fdd}}"
                 "tr.improvement{{background:#dfd}}tr.undecided{{color:#777}}"
                 "</style></head><body>\n<h1>fdrill compare — {}</h1>\n<ul><li>A: {}</li>"
                 "<li>B: {}</li></ul>\n",
                 e(CompareVerdictName(c.overall)), e(CompareVerdictName(c.overall)), e(Label(c.a)),
                 e(Label(c.b)));
  if (!c.fingerprinted) {
    out +=
        "<p>What the nodes ran: not recorded by both sides, so this cannot say what "
        "changed.</p>\n";
  } else if (c.differences.empty()) {
    out += "<p>What the nodes ran: the same in both.</p>\n";
  } else {
    out += "<h2>What differs</h2>\n<table><tr><th></th><th>A</th><th>B</th></tr>\n";
    for (const FingerprintDifference& d : c.differences)
      fmt::format_to(w, "<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", e(d.key), e(d.a), e(d.b));
    out += "</table>\n";
  }
  for (const std::string& warning : c.warnings)
    fmt::format_to(w, "<p><strong>Note</strong>: {}</p>\n", e(warning));
  fmt::format_to(w, "<p>{}</p>\n", e(Method(c.options)));
  out +=
      "<table><tr><th>metric</th><th></th><th>unit</th><th>better</th><th>basis</th>"
      "<th>n A</th><th>n B</th><th>A</th><th>B</th><th>B/A</th><th>interval</th>"
      "<th>verdict</th></tr>\n";
  for (const CompareRow& r : c.rows) {
    const char* cls =
        r.verdict == CompareVerdict::kRegression    ? "regression"
        : r.verdict == CompareVerdict::kImprovement ? "improvement"
        : r.verdict == CompareVerdict::kNotEnoughRuns || r.verdict == CompareVerdict::kNotCompared
            ? "undecided"
            : "decided";
    fmt::format_to(w,
                   "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                   "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                   "<td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>\n",
                   cls, e(r.group), e(r.metric), e(r.unit), BetterName(r.better), e(r.basis), r.n_a,
                   r.n_b, Num(r.a), Num(r.b), Num(r.ratio), e(Interval(r)), e(VerdictText(r)));
  }
  fmt::format_to(w, "</table>\n<p><strong>{}</strong></p>\n</body></html>\n", e(Conclusion(c)));
  return out;
}

// One testsuite, a testcase per metric: a regression fails, an undecided
// metric is skipped, the rest pass.
std::string RenderCompareJunit(const Comparison& c) {
  const Counts n = Count(c);
  std::string out;
  auto w = std::back_inserter(out);
  fmt::format_to(w,
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"fdrill compare\" "
                 "tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n"
                 "<testsuite name=\"{} vs {}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
                 c.rows.size(), n.regressed, n.undecided, EscapeXml(c.a.dir), EscapeXml(c.b.dir),
                 c.rows.size(), n.regressed, n.undecided);
  for (const CompareRow& r : c.rows) {
    const std::string detail =
        fmt::format("A {} B {} {} (B/A {}, interval {}, threshold {:g} %, {} a side by {}): {}",
                    Num(r.a), Num(r.b), r.unit, Num(r.ratio), Interval(r), r.threshold * 100,
                    std::min(r.n_a, r.n_b), r.basis, VerdictText(r));
    fmt::format_to(w, "  <testcase classname=\"{}\" name=\"{}\">", EscapeXml(r.group),
                   EscapeXml(r.metric));
    if (r.verdict == CompareVerdict::kRegression) {
      fmt::format_to(w, "<failure message=\"regression\">{}</failure>", EscapeXml(detail));
    } else if (r.verdict == CompareVerdict::kNotEnoughRuns ||
               r.verdict == CompareVerdict::kNotCompared) {
      fmt::format_to(w, "<skipped message=\"{}\"/>", EscapeXml(detail));
    } else {
      fmt::format_to(w, "<system-out>{}</system-out>", EscapeXml(detail));
    }
    out += "</testcase>\n";
  }
  out += "</testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace fdrill

// The two renderings of a Comparison: Markdown for people, JSON for scripts.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/compare.h"

namespace fdrill {

namespace {

using Json = nlohmann::ordered_json;

constexpr char kNone[] = "—";

std::string Num(const std::optional<double>& x, int decimals) {
  return x ? fmt::format("{:.{}f}", *x, decimals) : kNone;
}

std::string PValue(const std::optional<double>& p) {
  if (!p) return kNone;
  return *p < 1e-4 ? fmt::format("{:.1e}", *p) : fmt::format("{:.4f}", *p);
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

std::string Label(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name.empty() ? "unnamed" : name;
  return name.empty() ? dir : fmt::format("{} ({})", dir, name);
}

}  // namespace

std::string RenderCompareMarkdown(const Comparison& c) {
  const CompareOptions& o = c.options;
  std::string out;
  auto w = std::back_inserter(out);
  fmt::format_to(w, "# fdrill compare — {}\n\n- A: {}\n- B: {}\n\n", CompareVerdictName(c.overall),
                 Label(c.a_dir, c.a_name), Label(c.b_dir, c.b_name));
  fmt::format_to(w,
                 "Per-iteration busbw, B against A. A row is a regression when the {:g} % "
                 "bootstrap interval of median B / median A ({} resamples) lies wholly below "
                 "{:g} and the Mann–Whitney U p-value is below {:g}; an improvement when it "
                 "lies wholly above {:g} with p below {:g}; else no change (threshold {:g} %).\n\n",
                 o.confidence * 100, o.resamples, 1 - o.threshold, o.alpha, 1 + o.threshold,
                 o.alpha, o.threshold * 100);
  // What changed comes before what it did.
  if (!c.fingerprinted) {
    out +=
        "What the nodes ran: not recorded by both runs (inventory.json without "
        "`software`: an older fdrill, or no inventory), so this cannot say what changed.\n\n";
  } else if (c.differences.empty()) {
    out +=
        "What the nodes ran: the same in both (kernel, drivers, HCA firmware, MTUs, transport "
        "sysctls, fdrill).\n\n";
  } else {
    out += "## What differs\n\n| | A | B |\n|---|---|---|\n";
    for (const FingerprintDifference& d : c.differences)
      fmt::format_to(w, "| {} | {} | {} |\n", d.key, d.a, d.b);
    out += "\n";
  }
  if (c.rows.empty()) {
    out += "No (op, size, phase) was measured by either run.\n";
    return out;
  }
  fmt::format_to(
      w,
      "| op | size (B) | phase | n A | n B | median A (GB/s) | median B (GB/s) | B/A | "
      "{:g} % CI | p | verdict |\n|---|---:|---|---:|---:|---:|---:|---:|---|---:|---|\n",
      o.confidence * 100);
  int regressions = 0;
  int improvements = 0;
  for (const CompareRow& r : c.rows) {
    std::string verdict = CompareVerdictName(r.verdict);
    if (r.verdict == CompareVerdict::kRegression) {
      ++regressions;
      verdict = "**regression**";
    }
    if (r.verdict == CompareVerdict::kImprovement) ++improvements;
    if (!r.note.empty()) verdict += " (" + r.note + ")";
    const std::string ci = r.ci_low ? fmt::format("{:.4f}–{:.4f}", *r.ci_low, *r.ci_high) : kNone;
    fmt::format_to(w, "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", Cell(r.op),
                   r.bytes, Cell(r.phase), r.n_a, r.n_b, Num(r.median_a_gbps, 3),
                   Num(r.median_b_gbps, 3), Num(r.ratio, 4), ci, PValue(r.p_value), verdict);
  }
  fmt::format_to(w, "\n**{}**: {} of {} rows regressed, {} improved.\n",
                 CompareVerdictName(c.overall), regressions, c.rows.size(), improvements);
  return out;
}

std::string RenderCompareJson(const Comparison& c) {
  const CompareOptions& o = c.options;
  Json j;
  j["verdict"] = CompareVerdictName(c.overall);
  j["a"] = {{"dir", c.a_dir}, {"name", c.a_name}};
  j["b"] = {{"dir", c.b_dir}, {"name", c.b_name}};
  j["method"] = {{"statistic", "median busbw_gbps per iteration"},
                 {"threshold", o.threshold},
                 {"alpha", o.alpha},
                 {"confidence", o.confidence},
                 {"resamples", o.resamples},
                 {"seed", o.seed}};
  j["fingerprinted"] = c.fingerprinted;
  j["differences"] = Json::array();
  for (const FingerprintDifference& d : c.differences)
    j["differences"].push_back({{"key", d.key}, {"a", d.a}, {"b", d.b}});
  j["rows"] = Json::array();
  for (const CompareRow& r : c.rows) {
    Json row = {{"op", r.op},
                {"bytes", r.bytes},
                {"phase", r.phase},
                {"n_a", r.n_a},
                {"n_b", r.n_b},
                {"median_a_gbps", Number(r.median_a_gbps)},
                {"median_b_gbps", Number(r.median_b_gbps)},
                {"ratio", Number(r.ratio)},
                {"ci_low", Number(r.ci_low)},
                {"ci_high", Number(r.ci_high)},
                {"p_value", Number(r.p_value)},
                {"verdict", CompareVerdictName(r.verdict)}};
    if (!r.note.empty()) row["note"] = r.note;
    j["rows"].push_back(std::move(row));
  }
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace fdrill

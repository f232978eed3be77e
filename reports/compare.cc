// CompareRuns: group, test, decide. Rendering is in compare_report.cc.
#include "reports/compare.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "reports/ab_stats.h"
#include "reports/analysis.h"
#include "reports/run_dir.h"
#include "reports/series.h"
#include "reports/stats.h"

namespace fdrill {

namespace {

constexpr char kWholeRun[] = "whole run";

using Key = std::tuple<std::string, int64_t>;  // op, bytes

// Per (op, bytes) and phase name, the busbw of every iteration that ended in
// the phase (several phases of one name pool their iterations). `phase_order`
// receives the phase names in start order, each once.
using Samples = std::map<Key, std::map<std::string, std::vector<double>>>;

Samples Collect(const RunData& run, std::vector<std::string>* phase_order) {
  double run_end = 0;
  for (const Event& e : run.events) run_end = std::max(run_end, e.t);
  for (const MetricRecord& m : run.metrics) run_end = std::max(run_end, m.t);
  const std::vector<PhaseStats> phases = AnalyzePhases(run.events, {}, run_end);
  auto note = [&](const std::string& name) {
    if (std::find(phase_order->begin(), phase_order->end(), name) == phase_order->end()) {
      phase_order->push_back(name);
    }
  };
  for (const PhaseStats& p : phases) note(p.name);
  if (phases.empty()) note(kWholeRun);

  std::map<Key, std::vector<MetricRecord>> by_key;
  for (const MetricRecord& m : run.metrics) by_key[{m.op, m.bytes}].push_back(m);
  Samples out;
  for (const auto& [key, records] : by_key) {
    const std::vector<Iteration> series = BuildIterations(records);
    auto& per_phase = out[key];
    if (phases.empty()) {
      for (const Iteration& it : series) per_phase[kWholeRun].push_back(it.busbw_gbps);
    }
    for (const PhaseStats& p : phases) {
      std::vector<double>& v = per_phase[p.name];
      for (const Iteration* it : EndingIn(series, p.start_s, p.end_s, false)) {
        v.push_back(it->busbw_gbps);
      }
    }
  }
  return out;
}

CompareRow CompareSamples(const std::vector<double>& a, const std::vector<double>& b,
                          const CompareOptions& o) {
  CompareRow row;
  row.n_a = static_cast<int>(a.size());
  row.n_b = static_cast<int>(b.size());
  row.median_a_gbps = Median(a);
  row.median_b_gbps = Median(b);
  if (row.n_a < o.min_samples || row.n_b < o.min_samples) {
    row.note = fmt::format("fewer than {} iterations in {}", o.min_samples,
                           row.n_a < o.min_samples ? "A" : "B");
    return row;
  }
  if (!(*row.median_a_gbps > 0)) {
    row.note = "median busbw of A is not positive";
    return row;
  }
  row.ratio = *row.median_b_gbps / *row.median_a_gbps;
  if (std::optional<MannWhitney> mw = MannWhitneyU(a, b)) row.p_value = mw->p_value;
  if (std::optional<Interval> ci =
          BootstrapRatioOfMedians(a, b, o.resamples, o.seed, o.confidence)) {
    row.ci_low = ci->low;
    row.ci_high = ci->high;
  }
  if (!row.ci_low || !row.p_value) {
    row.note = "no confidence interval";
    return row;
  }
  const bool significant = *row.p_value < o.alpha;
  if (significant && *row.ci_high < 1 - o.threshold) {
    row.verdict = CompareVerdict::kRegression;
  } else if (significant && *row.ci_low > 1 + o.threshold) {
    row.verdict = CompareVerdict::kImprovement;
  } else {
    row.verdict = CompareVerdict::kNoChange;
  }
  return row;
}

}  // namespace

const char* CompareVerdictName(CompareVerdict verdict) {
  switch (verdict) {
    case CompareVerdict::kNoChange:
      return "no change";
    case CompareVerdict::kRegression:
      return "regression";
    case CompareVerdict::kImprovement:
      return "improvement";
    case CompareVerdict::kNotCompared:
      return "not compared";
  }
  return "not compared";
}

Comparison CompareRuns(const RunData& a, const RunData& b, const CompareOptions& options) {
  Comparison c;
  c.a_name = a.plan.name;
  c.b_name = b.plan.name;
  c.fingerprinted = !a.fingerprint.empty() && !b.fingerprint.empty();
  if (c.fingerprinted) c.differences = DiffFingerprints(a.fingerprint, b.fingerprint);
  c.options = options;
  std::vector<std::string> phase_order;
  const Samples sa = Collect(a, &phase_order);
  const Samples sb = Collect(b, &phase_order);

  std::vector<Key> keys;
  for (const auto& [key, _] : sa) keys.push_back(key);
  for (const auto& [key, _] : sb) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

  static const std::vector<double> kEmpty;
  auto find = [](const Samples& s, const Key& key, const std::string& phase) {
    auto k = s.find(key);
    if (k == s.end()) return &kEmpty;
    auto p = k->second.find(phase);
    return p == k->second.end() ? &kEmpty : &p->second;
  };
  for (const Key& key : keys) {
    for (const std::string& phase : phase_order) {
      const std::vector<double>* va = find(sa, key, phase);
      const std::vector<double>* vb = find(sb, key, phase);
      if (va->empty() && vb->empty()) continue;
      CompareRow row = CompareSamples(*va, *vb, options);
      row.op = std::get<0>(key);
      row.bytes = std::get<1>(key);
      row.phase = phase;
      c.rows.push_back(std::move(row));
    }
  }
  const auto any = [&](CompareVerdict v) {
    return std::any_of(c.rows.begin(), c.rows.end(),
                       [v](const CompareRow& r) { return r.verdict == v; });
  };
  c.overall = any(CompareVerdict::kRegression)    ? CompareVerdict::kRegression
              : any(CompareVerdict::kImprovement) ? CompareVerdict::kImprovement
                                                  : CompareVerdict::kNoChange;
  return c;
}

Result<Comparison> CompareRunDirs(const std::string& a_dir, const std::string& b_dir,
                                  const CompareOptions& options) {
  Result<RunData> a = LoadRunDir(a_dir);
  if (!a.ok()) return a.status();
  Result<RunData> b = LoadRunDir(b_dir);
  if (!b.ok()) return b.status();
  for (const auto& [run, dir] : {std::pair{&*a, &a_dir}, std::pair{&*b, &b_dir}}) {
    if (run->metrics.empty()) {
      return FailedPrecondition(fmt::format("{}: no metrics record to compare", *dir));
    }
  }
  Comparison c = CompareRuns(*a, *b, options);
  c.a_dir = a_dir;
  c.b_dir = b_dir;
  return c;
}

int ExitCodeForComparison(const Comparison& comparison) {
  return comparison.overall == CompareVerdict::kRegression ? 1 : 0;
}

Result<double> ParseThreshold(std::string_view text) {
  std::string_view number = text;
  const bool percent = !number.empty() && number.back() == '%';
  if (percent) number.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size()) {
    return InvalidArgument(fmt::format("threshold \"{}\" is not a number like 3% or 0.03", text));
  }
  if (percent) value /= 100;
  if (!(value >= 0 && value < 1)) {
    return InvalidArgument(
        fmt::format("threshold \"{}\" must lie in [0 %, 100 %) (write 3% or 0.03)", text));
  }
  return value;
}

}  // namespace fdrill

// `fdrill compare A B`: did run B's bus bandwidth regress against run A's?
// For every (op, message size, phase) that either run measured, the two
// samples of per-iteration busbw (series.h) are compared by
//   - the ratio of medians B/A with a percentile-bootstrap confidence
//     interval (ab_stats.h; fixed seed, so a rerun gives the same answer), and
//   - a two-sided Mann–Whitney U test,
// and the row is a regression when the whole interval lies below
// 1 − threshold and p < alpha, an improvement when it lies wholly above
// 1 + threshold and p < alpha, else no change. Demanding both the interval and
// the test keeps a noisy shared fabric from producing false verdicts; the
// threshold says how much change matters. Phases are matched by name; a run
// without phase events is one phase, "whole run". Definitions: README.md.
// Pure apart from CompareRunDirs, which reads the two directories.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/result.h"
#include "reports/run_data.h"

namespace fdrill {

struct CompareOptions {
  double threshold = 0.03;  // fraction: 0.03 = 3 %
  double alpha = 0.05;      // Mann–Whitney significance level
  double confidence = 0.95;
  int resamples = 2000;
  uint64_t seed = 0x5EED'F00Dull;
  int min_samples = 2;  // fewer iterations on either side: "not compared"
};

enum class CompareVerdict { kNoChange, kRegression, kImprovement, kNotCompared };

// "no change" | "regression" | "improvement" | "not compared".
const char* CompareVerdictName(CompareVerdict verdict);

struct CompareRow {
  std::string op;
  int64_t bytes = 0;
  std::string phase;
  int n_a = 0;
  int n_b = 0;
  std::optional<double> median_a_gbps;
  std::optional<double> median_b_gbps;
  std::optional<double> ratio;  // median B / median A
  std::optional<double> ci_low;
  std::optional<double> ci_high;
  std::optional<double> p_value;
  CompareVerdict verdict = CompareVerdict::kNotCompared;
  std::string note;  // why a row was not compared
};

struct Comparison {
  std::string a_dir, b_dir;    // as given; empty for CompareRuns
  std::string a_name, b_name;  // plan names
  CompareOptions options;
  std::vector<CompareRow> rows;  // by op, size, then phase in A's order
  // What the nodes ran that differs between A and B (inventory.json's
  // software, firmware, MTUs); empty when nothing known differs.
  std::vector<FingerprintDifference> differences;
  // Whether both runs recorded what their nodes ran.
  bool fingerprinted = false;
  // regression if any row regressed; else improvement if any improved; else
  // no change (also when no row could be compared).
  CompareVerdict overall = CompareVerdict::kNoChange;
};

Comparison CompareRuns(const RunData& a, const RunData& b, const CompareOptions& options = {});

// Loads both directories (run_dir.h). An unreadable directory, or one without
// a single metrics record, is an error Status (the CLI exits 2).
Result<Comparison> CompareRunDirs(const std::string& a_dir, const std::string& b_dir,
                                  const CompareOptions& options = {});

// 1 when any row regressed, else 0.
int ExitCodeForComparison(const Comparison& comparison);

// "3%" → 0.03; a bare number is a fraction ("0.03"). Must lie in [0, 1).
Result<double> ParseThreshold(std::string_view text);

std::string RenderCompareMarkdown(const Comparison& comparison);
std::string RenderCompareJson(const Comparison& comparison);  // pretty, newline-terminated

}  // namespace fdrill

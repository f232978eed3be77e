// `fdrill compare A B`: did B regress against A? A and B are run directories
// or campaign directories (campaign.json and run-NN, `fdrill campaign`).
//
// Metrics, each a number per run:
//   - busbw: per (op, message size, phase), the median busbw of the
//     iterations that ended in the phase (higher is better);
//   - per fault (by id): slowdown, time to recover, longest stall and GPU·s
//     lost (lower is better) and time to impact (reported, no direction);
//   - iterations redone after restarts, when a run restarted (lower is better).
// The samples: one value per run. With one run on both sides, busbw falls
// back to the means of consecutive batches of the run's iterations
// (ab_stats.h: iterations are autocorrelated, batch means nearly
// independent), but that interval cannot see how runs differ, so it decides
// only with --run-spread (a known run-to-run sd); a fault's metrics have one
// value a side and cannot be judged.
//
// Per metric the ratio B/A with a Welch t interval (RatioOfMeans) and a
// verdict against the metric's threshold (busbw --threshold, the fault
// metrics --time-threshold):
//   regression / improvement  the whole interval beyond 1 ∓ threshold on the
//                             worse / better side (at true no change, the
//                             chance of this is below (1 - confidence) / 2);
//   changed                   (no direction) the interval clear of 1 ± threshold;
//   no change                 the ratio within 1 ± threshold; when the
//                             interval reaches past a threshold, a note says
//                             how many runs a side would rule that out;
//   not enough runs           the ratio past a threshold, the interval not
//                             wholly: how many runs a side would decide;
//   not compared              a side has no value.
// Overall: regression if any metric regressed (exit 1); else improvement, or
// no change, when some metric was decided (exit 0); else not enough runs or
// not compared (exit 2: cannot compare). Phases are matched by name; a run
// without phase events is one phase, "whole run". Definitions: README.md.
// Pure apart from CompareRunDirs, which reads the directories.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/core/result.h"
#include "reports/run_data.h"

namespace fdrill {

struct CompareOptions {
  double threshold = 0.03;       // busbw: fraction, 0.03 = 3 %
  double time_threshold = 0.25;  // a fault's slowdown, times, stall, GPU·s lost
  double confidence = 0.95;
  int batches = 10;  // one run a side: busbw over this many batches of iterations
  // One run a side: the sd of a run's log busbw around its drill's mean (a
  // campaign's spread, as compare's JSON gives it); 0 = unknown, and one run
  // a side decides nothing.
  double run_spread = 0;
};

enum class CompareVerdict {
  kNoChange,
  kRegression,
  kImprovement,
  kChanged,
  kNotEnoughRuns,
  kNotCompared
};

// "no change" | "regression" | "improvement" | "changed" | "not enough runs"
// | "not compared".
const char* CompareVerdictName(CompareVerdict verdict);

enum class Better { kHigher, kLower, kNeither };

struct CompareRow {
  std::string group;   // "busbw", or the fault's id
  std::string metric;  // "all_reduce 4194304 B baseline", "time to recover"
  std::string unit;    // "GB/s", "x", "s", "ms", "GPU·s", "steps"
  Better better = Better::kHigher;
  std::string basis;  // "runs" | "batches of iterations"
  // busbw rows: what was measured (empty / 0 for the others).
  std::string op;
  int64_t bytes = 0;
  std::string phase;
  int n_a = 0;  // samples a side
  int n_b = 0;
  std::optional<double> a;  // the side's mean over its samples
  std::optional<double> b;
  std::optional<double> ratio;  // B / A
  std::optional<double> ci_low;
  std::optional<double> ci_high;
  double threshold = 0;
  // Over runs: the sd of one run's value around its side's mean, as a
  // fraction (of log values; relative to mean A when a value is not
  // positive) — what --run-spread wants for one run a side.
  std::optional<double> spread;
  CompareVerdict verdict = CompareVerdict::kNotCompared;
  // not enough runs: runs per side that would decide, when some number would.
  std::optional<int> runs_needed;
  std::string note;
};

struct CompareSide {
  std::string dir;
  std::string name;  // the plan's
  bool campaign = false;
  int runs = 0;
};

struct Comparison {
  CompareSide a, b;
  CompareOptions options;
  std::vector<CompareRow> rows;  // busbw by op, size, phase; then faults in A's order
  // What the nodes ran that differs between A and B (the first run of each
  // side: inventory.json's software, firmware, MTUs); empty when nothing known
  // differs.
  std::vector<FingerprintDifference> differences;
  // Whether both sides recorded what their nodes ran.
  bool fingerprinted = false;
  // Things to know before reading the verdict (a campaign whose runs ran
  // different software, different scenarios on the two sides).
  std::vector<std::string> warnings;
  CompareVerdict overall = CompareVerdict::kNotCompared;
};

// Each side's runs, in order (at least one each).
Comparison CompareRuns(const std::vector<RunData>& a, const std::vector<RunData>& b,
                       const CompareOptions& options = {});

// A run directory, or a campaign directory's runs that finished (those the
// harness could not finish, exit 2, are not measurements). An unreadable
// directory, a campaign without a finished run, or a run without a single
// metrics record is an error Status (the CLI exits 2).
Result<std::vector<RunData>> LoadCompareSide(const std::string& dir, CompareSide* side);
Result<Comparison> CompareRunDirs(const std::string& a_dir, const std::string& b_dir,
                                  const CompareOptions& options = {});

// 1 regression; 0 improvement or no change; 2 nothing could be decided.
int ExitCodeForComparison(const Comparison& comparison);

// "3%" → 0.03; a bare number is a fraction ("0.03"). Must lie in [0, 1).
Result<double> ParseThreshold(std::string_view text);

std::string RenderCompareMarkdown(const Comparison& comparison);
std::string RenderCompareJson(const Comparison& comparison);  // pretty, newline-terminated
std::string RenderCompareHtml(const Comparison& comparison);  // one file, no scripts
std::string RenderCompareJunit(const Comparison& comparison);

}  // namespace fdrill

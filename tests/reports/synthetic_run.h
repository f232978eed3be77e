// Synthetic run directories with known answers, written the way the
// controller writes them (docs/reference/formats.md). Four ranks on nodes n0..n3 run a
// 400 MB all_reduce whose undisturbed iteration takes 60 ms (±1 % noise), so
// the baseline busbw is 10 GB/s ±1 %. A SlowSpan multiplies the time of every
// iteration that starts inside it; a Stall makes the iteration in progress at
// `at_s` end at `until_s` (what a link-down does to a collective). `noise`,
// `speed` and `seed` make the A and B runs of `fdrill compare` tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/analysis.h"
#include "reports/report.h"

namespace fdrill::reports_test {

inline constexpr int kRanks = 4;
inline constexpr int64_t kBytes = 400'000'000;
inline constexpr double kBaseMs = 60.0;  // 400e6 B × 1.5 / 60 ms = 10 GB/s busbw
inline constexpr double kBaselineGbps = 10.0;

struct SlowSpan {
  double from_s = 0;
  double to_s = 0;
  double factor = 1;
  std::string culprit_node;  // its rank is the slowest and its peers wait for it
};

struct Stall {
  double at_s = 0;
  double until_s = 0;
};

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

class SyntheticRun;
// RUN written to a temporary directory, loaded and analysed (an empty
// Summary, with a test failure, when it does not load).
Summary AnalyzeRun(const SyntheticRun& run);

class SyntheticRun {
 public:
  SyntheticRun();

  // A complete, healthy drill: baseline [0.5, 15), fault window [15, 20),
  // recovery [20, end_s], a fault "slow-link" (link_rate on n2) applied at 15
  // and reverted at 20, residue empty, every workload exit 0, drill_end
  // completed. Expectations: max_slowdown 5, max_time_to_recover_s 10,
  // no_residue, data_intact. Callers add spans, stalls and events on top.
  static SyntheticRun Standard();
  // Standard, with the slow-link fault making n2 three times slower from
  // 15 s until `until_s` (1e9: the fabric never recovers).
  static SyntheticRun SlowN2(double until_s);

  double start_s = 1.0;  // the first iteration starts here
  double end_s = 40.0;   // iterations start until here
  double noise = 0.01;   // each iteration's time varies uniformly by ±noise
  double speed = 1.0;    // busbw multiplier: 0.95 plants a 5 % regression
  uint32_t seed = 7;     // of the noise
  std::vector<SlowSpan> slow;
  std::vector<Stall> stalls;
  std::map<std::pair<int64_t, int>, int64_t> wrong;  // (iter, rank) -> wrong elements
  nlohmann::json plan;
  std::vector<nlohmann::json> events;  // sorted by t when written

  void AddEvent(double t, const std::string& type,
                nlohmann::json fields = nlohmann::json::object());
  // Removes every event of `type`.
  void DropEvents(const std::string& type);

  std::vector<std::string> MetricLines() const;
  // plan.json, events.jsonl and metrics.jsonl into `dir`.
  void WriteTo(const std::filesystem::path& dir) const;
};

// RUN written into DIR, then WriteReports over it: the summary, the
// reports beside the run.
Result<Summary> WriteWithReports(const SyntheticRun& run, const std::filesystem::path& dir);

void WriteText(const std::filesystem::path& path, const std::string& text);
std::string ReadText(const std::filesystem::path& path);

}  // namespace fdrill::reports_test

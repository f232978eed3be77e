// fdrill campaign: one scenario run K times into one directory, so that an
// A/B comparison across a firmware or driver change rests on several runs,
// not one (issue 20). The directory holds
//   campaign.json  the index: label, repeat, and per run its directory,
//                  verdict, exit code and wall time, and whether it is complete
//   scenario.yaml  the scenario as run: every run of a campaign runs the same
//                  bytes, and a resumed campaign refuses a changed file
//   run-01 ...     one run directory each (docs/reference/formats.md)
//
// Resumable: a run directory with summary.json is done and kept; one without
// (the controller was stopped, Ctrl-C) is removed and run again. Rerunning
// the same command resumes; a larger --repeat extends a complete campaign.
// Each run vouches for the fabric itself (the drill's pre-flight snapshot,
// its residue check at the end); a run the harness could not finish (exit 2:
// residue, an agent lost, Ctrl-C) stops the campaign there, since the next
// runs would measure a fabric nobody vouched for. A run whose expectations
// failed (exit 1) is a measurement like any other: the campaign goes on.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "common/core/result.h"

namespace fdrill {

struct CampaignOptions {
  std::string dir;            // the campaign directory
  std::string label;          // [A-Za-z0-9._-]+, e.g. "fw-28.39"
  std::string scenario_file;  // copied to DIR/scenario.yaml on the first run
  int repeat = 0;             // 1 .. kMaxCampaignRuns
};

inline constexpr int kMaxCampaignRuns = 1000;

struct CampaignRun {
  int index = 0;        // 1-based
  std::string dir;      // "run-01", relative to the campaign directory
  std::string verdict;  // summary.json's, or "" when it wrote none
  int exit_code = 0;    // fdrill run's: 0 pass, 1 fail, 2 error
  double wall_s = 0;
};

struct CampaignResult {
  std::vector<CampaignRun> runs;  // every run the directory holds, in order
  bool complete = false;          // runs.size() == repeat and none stopped it
  std::string stopped;            // why it stopped short; "" when it did not
};

// The label and repeat alone (RunCampaign checks them too): an error naming
// the flag.
Status CheckCampaignOptions(const CampaignOptions& options);

// Runs one drill into RUN_DIR (absolute) and returns fdrill run's exit code.
using RunOneDrill = std::function<int(const std::string& run_dir)>;

// Checks OPTIONS and the directory before any run (bad label or repeat, a
// directory holding something else or another scenario's campaign: an error
// naming the flag or file), then runs what is missing. ABORT (may be null)
// set between runs stops it, as Ctrl-C.
Result<CampaignResult> RunCampaign(const CampaignOptions& options, const RunOneDrill& run_one,
                                   const std::atomic<bool>* abort = nullptr);

// 0 complete and every run passed, 1 complete with a failed run, 2 stopped.
int CampaignExitCode(const CampaignResult& result);

}  // namespace fdrill

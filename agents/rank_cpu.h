// "rank/<r>.cpu_seconds" for every workload rank on this node (injectors/
// ranks.h FindRanks: fdrill-collective in the agent's network namespace):
// its user + system CPU time so far, one of the telemetry counters
// (agents/counters.h). A stopped or starved rank's rate falls against its
// peers' (busy-polling ranks use a core each) — the localisation's per-rank
// CPU signal. Nothing when no rank runs here.
//
// Finding the ranks inspects every process on the machine (its stat, exe,
// network namespace and environment): done every second, that was a
// quarter of an idle agent's CPU (docs/performance.md). So the ranks are
// found by a scan, and each sample in between reads only the known ranks'
// /proc/PID/stat (ProcessTable::Stat). /proc is scanned again
//   - on the first sample, and every kRescanEvery samples after a scan (a
//     rank started since: a new run, a restarted rank);
//   - at once when a known rank is gone, a zombie, or its pid names another
//     process (its start time differs): the sample then says what runs now;
//   - on every sample for kRescanEvery samples after ExpectRanks() (the
//     agent started a workload: its ranks appear within seconds), until
//     one is found.
// A rank that starts between scans is missing from the samples until the
// next one (at most kRescanEvery - 1 of them); the reports take a rank's
// rate from its first sample. Not thread-safe: the agent's telemetry tick
// owns it.
#pragma once

#include <vector>

#include "common/host/processes.h"
#include "common/wire/wire.h"
#include "injectors/ranks.h"

namespace fdrill {

class RankCpu {
 public:
  // 10 s at the default --telemetry-interval.
  static constexpr int kRescanEvery = 10;

  explicit RankCpu(ProcessTable& procs) : procs_(procs) {}

  // Adds "rank/<r>.cpu_seconds" for every rank with a rank number to `out`.
  void Sample(Json& out);

  // A workload was just started here: scan /proc on each of the next
  // kRescanEvery samples until a rank is found.
  void ExpectRanks() { eager_ = kRescanEvery; }

 private:
  // Re-reads the known ranks' stat into ranks_; false when one is no longer
  // the process it was (gone, a zombie, its pid reused).
  bool Refresh();
  void Scan();

  ProcessTable& procs_;
  std::vector<RankProc> ranks_;  // as of the last scan, cpu_ticks as of the last sample
  int since_scan_ = -1;          // samples since the last scan; -1: none yet
  int eager_ = 0;                // samples left that scan while no rank is known
};

}  // namespace fdrill

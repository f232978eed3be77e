// The benchmark loop of fdrill-collective, the same on every rank. For each
// size of the plan, in order:
//   warm-up: `warmup` untimed, unchecked collectives;
//   timed:   fill the input (untimed, in the backend's buffer when it is host
//            memory), the stop agreement when one is due, line up with every
//            rank (a barrier), run the collective timed on this rank's
//            CLOCK_MONOTONIC, settle (a barrier), check every element of the
//            result, add the metrics record to the writer's batch (metrics.h:
//            written in batches, all of a size's by the time it ends). The
//            agreement, line-up and settle are untimed, recorded as wait_ms.
// The line-up and the settle make time_ms the collective's own time, not a
// peer's fill or check (on oversubscribed cores those ran inside the peers'
// timed collectives: bench/collective_fidelity.sh). A straggler is not
// hidden by them: its delay is its peers' wait_ms, and reports take an
// iteration's time as the largest wait_ms + time_ms over its ranks.
// Nothing is built, looked up or written in the timed region itself.
// Stopping: all ranks stop at the same iteration. The agreement is a MAX
// over ranks of what each wants after its previous iteration: 1 on rank 0
// when this size's --duration has elapsed (measured from its first timed
// iteration) ends the size; 2 (stop file on rank 0; SIGTERM/SIGINT on any
// rank) ends the run. It comes before the first iteration of a size and then
// every Config::agree_every at the size's pace (rank 0 counts how many
// iterations fit, within what is left of --duration, at most 63, and the
// agreement carries the count). After each warm-up collective a blocking
// agreement can end the run too. --iters needs no agreement: every rank counts.
// Iteration numbers run on across sizes, so records of one iteration on every rank share `iter` and
// `bytes`. Data-check failures are printed to `err` (one line each) and counted; the loop keeps
// going. Errors of the collective or of the agreement end the loop with a Status: the caller must
// end the job, as peers may be stuck.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "common/core/result.h"
#include "workloads/backend.h"
#include "workloads/config.h"
#include "workloads/metrics.h"
#include "workloads/plan.h"
#include "workloads/summary.h"
#include "workloads/world.h"

namespace fdrill {

struct SizeOutcome {
  uint64_t bytes = 0;
  Layout layout;
  int64_t iterations = 0;  // timed iterations of this size, the same on every rank
  TimeStats time;          // each rank's mean, p50 and p99, averaged over ranks
  uint64_t wrong = 0;      // wrong elements: all ranks, all iterations
};

struct RunOutcome {
  int64_t iterations = 0;  // timed iterations, all sizes
  bool stopped = false;    // ended by stop file or signal (not by -n/--duration)
  uint64_t wrong = 0;
  std::vector<SizeOutcome> sizes;  // those with at least one timed iteration
};

// `plan` comes from PlanSizes(config, world.size()); `metrics` may be null.
Result<RunOutcome> RunWorkload(const Config& config, const std::vector<SizeStep>& plan,
                               World& world, Backend& backend, MetricsWriter* metrics,
                               std::ostream& err);

// This rank's statistics averaged with every other rank's. Collective.
Result<TimeStats> AverageOverRanks(World& world, const TimeStats& mine);

// Test hook of --corrupt-at: the rank whose output it corrupts (the first
// whose result is checked: the root of reduce, else 0).
int CorruptingRank(const Config& config);

// Zeroes element `recv_count / 2` of `output` (no expected value is 0).
void CorruptOneElement(DType dtype, uint64_t recv_count, std::span<std::byte> output);

}  // namespace fdrill

// The iteration loop of fdrill-collective, the same on every rank:
//   warm-up: `warmup` untimed, unchecked collectives;
//   timed:   fill the input (untimed), run the collective timed on this
//            rank's CLOCK_MONOTONIC, read the output back, check every
//            element, write the metrics record, then agree on stopping.
// There is deliberately no barrier before a timed collective: a barrier
// would absorb a straggler's delay into untimed time and hide it.
// Stopping: all ranks stop after the same iteration. After each iteration
// (and each warm-up, where --duration does not count yet) every rank
// contributes a stop flag to an untimed
// MPI_Allreduce(MAX): set on rank 0 when --duration has elapsed (measured
// from the first timed iteration) or the stop file exists, on any rank when
// it got SIGTERM/SIGINT. --iters needs no agreement: every rank counts.
// Data-check failures are printed to `err` (one line each) and counted; the
// loop keeps going. Errors of the collective or of the agreement end the
// loop with a Status: the caller must end the job, as peers may be stuck.
#pragma once

#include <cstdint>
#include <ostream>

#include "harness/core/result.h"
#include "workloads/backend.h"
#include "workloads/config.h"
#include "workloads/metrics.h"
#include "workloads/world.h"

namespace fdrill {

struct RunOutcome {
  int64_t iterations = 0;     // timed iterations, the same on every rank
  bool stopped = false;       // ended by duration, stop file or signal
  uint64_t wrong = 0;         // wrong elements: all ranks, all iterations
  double median_time_us = 0;  // each rank's median, averaged over ranks
};

// `metrics` may be null (no --jsonl).
Result<RunOutcome> RunWorkload(const Config& config, World& world, Backend& backend, MetricsWriter* metrics,
                               std::ostream& err);

}  // namespace fdrill

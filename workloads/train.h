// --train: a training loop over the collective, to show whether a fault
// makes a job roll back and whether it comes back to the same answer.
// A state vector (float64, -b bytes) is updated each step s from the
// all-reduce (sum) of per-rank gradients that depend only on (s, rank, j):
// the data-check pattern of all_reduce/sum/float64 at iteration s, small
// integers whose sum is exact (pattern.h), so each step's result is also
// checked. Then state[j] = state[j] * 0.9 + sum[j] / 64 (deterministic
// IEEE arithmetic on identical inputs), so the final state, and its
// digest, is the same however often the job was killed and resumed.
// Rank 0 writes a checkpoint after every K-th step (checkpoint.h) and
// records each completed step in the progress file; on start it reads the
// latest checkpoint and broadcasts the step and state, so every rank
// resumes there. Steps past that checkpoint which an earlier run had
// completed are run again and counted as redone. Stop file and signals stop
// the loop as in runner.h, with the same split-phase agreement, so no
// network wait sits outside the timed collective.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <vector>

#include "common/core/result.h"
#include "workloads/backend.h"
#include "workloads/checkpoint.h"
#include "workloads/config.h"
#include "workloads/metrics.h"
#include "workloads/plan.h"
#include "workloads/summary.h"
#include "workloads/world.h"

namespace fdrill {

// One step of the state update: state * 0.9 + sum / 64, where sum is the
// all-reduce (sum) of every rank's gradient. train_reference.h recomputes
// the same without a network.
inline double TrainUpdate(double state, double sum) { return state * 0.9 + sum * (1.0 / 64); }
// Every element of the state before step 0.
inline constexpr double kTrainInitialState = 1.0;

// Where a run starts, the same on every rank after StartTraining.
struct TrainStart {
  int64_t step = 0;        // the first step to run: the checkpoint's, or 0
  bool restarted = false;  // an earlier run left a checkpoint or progress
  std::vector<double> state;
  std::unique_ptr<ProgressFile> progress;  // rank 0 only
};

// Collective, untimed: rank 0 prepares --checkpoint-dir (an unwritable one
// is an error here, before any step), reads the checkpoint and progress,
// checks the checkpoint fits this run (rank count, state size, step); then
// every rank gets the step and state. Failures are agreed (AgreeAllOk).
Result<TrainStart> StartTraining(const Config& config, const SizeStep& size, World& world);

struct TrainOutcome {
  int64_t first_step = 0;    // where this run resumed
  int64_t steps_run = 0;     // by this run
  bool stopped = false;      // by stop file or signal, before --steps
  uint64_t digest = 0;       // StateDigest of the final state
  int64_t steps_redone = 0;  // rank 0: all runs in this directory together
  uint64_t wrong = 0;        // wrong elements: all ranks, all steps
  TimeStats time;            // each rank's mean, p50 and p99 step time, averaged over ranks
};

// Runs steps start.step .. steps-1. `metrics` may be null. Errors end the
// loop; the caller must end the job (peers may be stuck in a collective).
Result<TrainOutcome> RunTraining(const Config& config, const SizeStep& size, TrainStart& start,
                                 World& world, Backend& backend, MetricsWriter* metrics,
                                 std::ostream& err);

// The rank --die-at-step kills: 1, or 0 on one rank.
int DyingRank(int nranks);

}  // namespace fdrill

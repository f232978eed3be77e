// Config: everything one fdrill-collective run was asked to do, validated by
// ParseCommandLine (cli.h) before MPI or any device is touched; what depends
// on the rank count is validated by PlanSizes (plan.h) right after. A plain
// value; every rank holds the same one.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/core/units.h"
#include "workloads/collective.h"

namespace fdrill {

// --train: a training loop instead of a benchmark (train.h).
struct TrainConfig {
  int64_t steps = 0;             // steps 0..steps-1
  int64_t checkpoint_every = 0;  // a checkpoint after every K-th step
  std::string checkpoint_dir;
  // Test-only: rank 1 (rank 0 on one rank) kills itself with SIGKILL when
  // it reaches this step, before its all-reduce.
  std::optional<int64_t> die_at_step;
};

struct Config {
  Op op = Op::kAllReduce;
  DType dtype = DType::kFloat32;
  RedOp redop = RedOp::kSum;  // used only when OpReduces(op)
  int root = 0;               // used only when OpHasRoot(op)
  // Message sizes in bytes (nccl-tests' "size", see Layout), ascending:
  // one, or the sweep of -b/-e/-f/-i. Each a positive multiple of
  // DTypeSize(dtype).
  std::vector<uint64_t> sizes;

  // Per size: stop after `iters` timed iterations or after `duration` of
  // timed iterations (rank 0's clock), whichever comes first; at least one
  // is set (not in train mode).
  std::optional<int64_t> iters;
  std::optional<Duration> duration;
  int64_t warmup = 5;  // per size: untimed, unchecked, not written

  std::string backend = "mpi";
  std::string jsonl;      // metrics path template ({rank}, {tmpdir}); empty: none
  std::string stop_file;  // stop when this path exists; empty: never
  // Not a flag: how often, at most, the ranks agree between timed
  // iterations whether to go on (runner.h: the line-ups in between are
  // barriers), and rank 0 looks for stop_file (StopFileWatch); tests set 0
  // to agree and look before every iteration.
  Duration agree_every = std::chrono::milliseconds(10);
  // --lineup: how a timed iteration is framed (runner.cc). kBarrier: a
  // barrier before the collective (every rank starts it together: its time
  // is the collective's, and a straggler shows as the others' wait_ms) and
  // one after it (the settle). kNone: the collectives back to back, as a
  // job issues them; a straggler's delay lands in its peers' time_ms.
  enum class LineUp { kBarrier, kNone };
  LineUp lineup = LineUp::kBarrier;
  Duration timeout = std::chrono::seconds(60);  // one collective, nccl backend

  std::optional<TrainConfig> train;

  // Test-only: after this (run-wide) timed iteration's collective, the
  // first rank whose result is checked (rank 0, or reduce's root) zeroes
  // one output element, so the data check must report it.
  std::optional<int64_t> corrupt_at;
};

// Exit statuses of fdrill-collective (the agent maps them to events).
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;       // bad flags, backend unavailable
inline constexpr int kExitDataCheck = 3;   // some iteration returned wrong data
inline constexpr int kExitCollective = 4;  // a collective failed or timed out

}  // namespace fdrill

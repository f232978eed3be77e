// Config: everything one fdrill-collective run was asked to do, validated by
// ParseCommandLine (cli.h) before MPI or any device is touched. A plain value;
// every rank holds the same one.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "harness/core/units.h"
#include "workloads/collective.h"

namespace fdrill {

struct Config {
  Op op = Op::kAllReduce;
  DType dtype = DType::kFloat32;
  RedOp redop = RedOp::kSum;
  uint64_t bytes = 0;  // a positive multiple of DTypeSize(dtype)

  // Stop after `iters` timed iterations or after `duration` of timed
  // iterations (rank 0's clock), whichever comes first; at least one is set.
  std::optional<int64_t> iters;
  std::optional<Duration> duration;
  int64_t warmup = 5;  // untimed, unchecked, not written

  std::string backend = "mpi";
  std::string jsonl;                            // metrics path template ({rank}, {tmpdir}); empty: none
  std::string stop_file;                        // stop when this path exists; empty: never
  Duration timeout = std::chrono::seconds(60);  // one collective, nccl backend

  // Test-only: rank 0 changes one output element after this iteration's
  // collective, so the data check must report it.
  std::optional<int64_t> corrupt_at;

  uint64_t count() const { return bytes / DTypeSize(dtype); }
};

// Exit statuses of fdrill-collective (the agent maps them to events).
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;       // bad flags, backend unavailable
inline constexpr int kExitDataCheck = 3;   // some iteration returned wrong data
inline constexpr int kExitCollective = 4;  // a collective failed or timed out

}  // namespace fdrill

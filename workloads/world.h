// World: the ranks of one run and the few untimed control-plane operations
// the workload needs among them (stop agreement, result totals, sharing the
// NCCL id). MpiWorld (mpi_world.h) is the real one; tests use a one-rank fake.
// Every method except the accessors is collective: all ranks call it, in the
// same order. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/core/result.h"

namespace fdrill {

class World {
 public:
  virtual ~World() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank among the ranks sharing this node (picks the GPU).
  virtual int local_rank() const = 0;

  virtual Result<int64_t> MaxInt64(int64_t value) = 0;
  // Returns once every rank has called it: the timed loop's line-up between
  // its agreements (runner.h), as a latency benchmark lines its ranks up.
  virtual Status Barrier() = 0;
  // Split-phase MaxInt64: Start contributes this rank's value and returns at
  // once; Finish waits for the result. The stop agreement rides alongside
  // the next timed collective this way, so no network wait sits outside
  // timed code, where a link fault would stall the job unseen by the metrics.
  // At most one may be outstanding.
  virtual Status StartMaxInt64(int64_t value) = 0;
  virtual Result<int64_t> FinishMaxInt64() = 0;
  virtual Result<int64_t> SumInt64(int64_t value) = 0;
  virtual Result<double> SumDouble(double value) = 0;
  // Copies `bytes` of rank `root` into `bytes` of every other rank.
  virtual Status Broadcast(std::span<std::byte> bytes, int root) = 0;
  // Every rank's `text`, in rank order, on rank 0; empty on the others.
  virtual Result<std::vector<std::string>> GatherToRoot(const std::string& text) = 0;
};

// Setup steps that can fail on some ranks only end with this, so no rank goes
// on to a collective its peers will never join. Returns `local` when it
// failed; otherwise ok when every rank is ok, or a status for which
// IsPeerFailure() holds when another rank failed.
Status AgreeAllOk(World& world, const Status& local);

// True for the status AgreeAllOk returns on ranks that did not fail
// themselves (the failing rank prints the reason; its peers stay quiet).
bool IsPeerFailure(const Status& status);

}  // namespace fdrill

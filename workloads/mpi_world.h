// MpiWorld: World over MPI_COMM_WORLD. Create it once per process, after the
// command line is parsed; it calls MPI_Init, and MPI_Finalize when destroyed.
// Errors of its collectives come back as Status (MPI_ERRORS_RETURN on a
// private duplicate of MPI_COMM_WORLD) instead of killing the job.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include "common/core/result.h"
#include "workloads/world.h"

namespace fdrill {

class MpiWorld final : public World {
 public:
  static Result<std::unique_ptr<MpiWorld>> Init(int* argc, char*** argv);
  ~MpiWorld() override;
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }

  Result<int64_t> MaxInt64(int64_t value) override;
  Status Barrier() override;
  Status StartMaxInt64(int64_t value) override;
  Result<int64_t> FinishMaxInt64() override;
  Result<int64_t> SumInt64(int64_t value) override;
  Result<double> SumDouble(double value) override;
  Status Broadcast(std::span<std::byte> bytes, int root) override;
  Result<std::vector<std::string>> GatherToRoot(const std::string& text) override;

  // Ends every rank of the job with `exit_code` (mpirun exits with it): for
  // errors after which a peer may be stuck inside a collective.
  [[noreturn]] void Abort(int exit_code);

 private:
  MpiWorld() = default;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  // The outstanding split-phase agreement (MPI_Iallreduce keeps pointers to
  // both values until MPI_Wait).
  MPI_Request pending_ = MPI_REQUEST_NULL;
  int64_t pending_in_ = 0;
  int64_t pending_out_ = 0;
};

// MPI_Get_library_version(), e.g. "Open MPI v4.1.4, package: Debian
// OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022"; callable any time.
std::string MpiLibraryVersion();

// "MPI_Allreduce: MPI_ERR_TRUNCATE: message truncated" from an MPI error code.
Status MpiError(const char* call, int code);

}  // namespace fdrill

// The MPI backend: each op is the MPI library's own blocking collective on
// host buffers (MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block,
// MPI_Bcast, MPI_Reduce, MPI_Alltoall, MPI_Sendrecv to the ring
// neighbours), over a private duplicate of MPI_COMM_WORLD with
// MPI_ERRORS_RETURN so a failure becomes a Status. float16 and bfloat16
// reduce through user-defined ops (mpi_ops.h). Runs anywhere MPI runs.
// A blocking MPI call cannot be timed out from inside: a peer that vanished
// is handled by mpirun (it ends the job), a stalled link by the agent.
#pragma once

#include <memory>

#include "common/core/result.h"
#include "workloads/backend.h"
#include "workloads/world.h"

namespace fdrill {

Result<std::unique_ptr<Backend>> MakeMpiBackend(const BackendOptions& options, World& world);

}  // namespace fdrill

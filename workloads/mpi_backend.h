// The MPI backend: the collective is the MPI library's own (MPI_Allreduce,
// blocking, host buffers), over a private duplicate of MPI_COMM_WORLD with
// MPI_ERRORS_RETURN so a failure becomes a Status. Runs anywhere MPI runs.
// A blocking MPI call cannot be timed out from inside: a peer that vanished
// is handled by mpirun (it ends the job), a stalled link by the agent.
#pragma once

#include <memory>

#include "harness/core/result.h"
#include "workloads/backend.h"
#include "workloads/world.h"

namespace fdrill {

Result<std::unique_ptr<Backend>> MakeMpiBackend(const BackendOptions& options, World& world);

}  // namespace fdrill

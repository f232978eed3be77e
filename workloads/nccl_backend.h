// The NCCL backend: the collective runs on this rank's GPU (local rank =
// device index) through a non-blocking NCCL communicator, bootstrapped with
// an id from rank 0 sent over the World. Every op is NCCL's own
// (ncclAllReduce, ncclAllGather, ncclReduceScatter, ncclBroadcast,
// ncclReduce); alltoall and sendrecv are ncclSend/ncclRecv pairs fused in
// one ncclGroupStart/End, as nccl-tests does. All five dtypes are native.
// Every wait polls ncclCommGetAsyncError and cudaStreamQuery against
// options.timeout; on an error or the deadline the communicator is aborted
// (ncclCommAbort) and a Status returned, so a dead peer or a cut link never
// hangs the process.
// Compiled only when CUDA and NCCL were found (FDRILL_WITH_NCCL).
#pragma once

#include <memory>

#include "common/core/result.h"
#include "workloads/backend.h"
#include "workloads/world.h"

namespace fdrill {

// Fails with "backend nccl: no CUDA device (cudaGetDeviceCount: ...)" on a
// node without a usable GPU, on every rank, without hanging.
Result<std::unique_ptr<Backend>> MakeNcclBackend(const BackendOptions& options, World& world);

}  // namespace fdrill

#include "workloads/nccl_backend.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <chrono>
#include <string>

namespace fdrill {

namespace {

std::string CudaText(cudaError_t e) { return cudaGetErrorString(e); }

Status CudaError(const char* call, cudaError_t e) {
  return Unavailable(fmt::format("backend nccl: {}: {}", call, CudaText(e)));
}

ncclDataType_t NcclType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return ncclFloat32;
  }
  return ncclFloat32;
}

ncclRedOp_t NcclOp(RedOp redop) {
  switch (redop) {
    case RedOp::kSum:
      return ncclSum;
  }
  return ncclSum;
}

class NcclBackend final : public Backend {
 public:
  explicit NcclBackend(const BackendOptions& options) : options_(options) {}
  ~NcclBackend() override {
    if (comm_ != nullptr) ncclCommAbort(comm_);
    ReleaseCuda();
  }

  // Collective. Each step that can fail on some ranks only ends in an
  // AgreeAllOk, so no rank waits for an id or a peer that will not come.
  Status Open(World& world) {
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    Status local = Status::Ok();
    if (e != cudaSuccess) {
      local = Unavailable("backend nccl: no CUDA device (cudaGetDeviceCount: " + CudaText(e) + ")");
    } else if (devices == 0) {
      local = Unavailable("backend nccl: no CUDA device (cudaGetDeviceCount: 0 devices)");
    } else if (world.local_rank() >= devices) {
      // NCCL refuses two ranks of one communicator on one GPU.
      local = Unavailable(fmt::format("backend nccl: local rank {} needs a GPU of its own, this node has {}",
                                      world.local_rank(), devices));
    }
    if (Status s = AgreeAllOk(world, local); !s.ok()) return s;
    if (Status s = AgreeAllOk(world, SetUpCuda(world.local_rank())); !s.ok()) return s;

    ncclUniqueId id{};
    local = Status::Ok();
    if (world.rank() == 0) {
      if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) local = NcclError("ncclGetUniqueId", r);
    }
    if (Status s = AgreeAllOk(world, local); !s.ok()) return s;
    if (Status s = world.Broadcast(std::as_writable_bytes(std::span(&id, 1)), 0); !s.ok()) return s;

    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // calls return ncclInProgress; we poll with a deadline
    ncclResult_t r = ncclCommInitRankConfig(&comm_, world.size(), id, world.rank(), &config);
    local = (r == ncclSuccess || r == ncclInProgress) ? Wait("ncclCommInitRankConfig", /*stream=*/false)
                                                      : NcclError("ncclCommInitRankConfig", r);
    return AgreeAllOk(world, local);
  }

  Status SetInput(std::span<const std::byte> input) override {
    if (input.size() != options_.bytes()) return Internal("SetInput: wrong buffer size");
    // Same stream as the collective, so the copy is ordered before it.
    cudaError_t e = cudaMemcpyAsync(send_, input.data(), input.size(), cudaMemcpyHostToDevice, stream_);
    if (e != cudaSuccess) return CudaError("cudaMemcpyAsync", e);
    return Status::Ok();
  }

  Status Run() override {
    ncclResult_t r = ncclInvalidUsage;
    switch (options_.op) {
      case Op::kAllReduce:
        r = ncclAllReduce(send_, recv_, options_.count, NcclType(options_.dtype), NcclOp(options_.redop), comm_,
                          stream_);
        break;
    }
    if (r != ncclSuccess && r != ncclInProgress) {
      Status s = NcclError("ncclAllReduce", r);
      Abort();
      return s;
    }
    return Wait("ncclAllReduce", /*stream=*/true);
  }

  Status GetOutput(std::span<std::byte> output) override {
    if (output.size() != options_.bytes()) return Internal("GetOutput: wrong buffer size");
    cudaError_t e = cudaMemcpyAsync(output.data(), recv_, output.size(), cudaMemcpyDeviceToHost, stream_);
    if (e != cudaSuccess) return CudaError("cudaMemcpyAsync", e);
    return Wait("cudaMemcpyAsync", /*stream=*/true);
  }

  Status Close() override {
    if (comm_ != nullptr) {
      // Finalize flushes outstanding work; in non-blocking mode it returns
      // ncclInProgress and completes in the background.
      ncclResult_t r = ncclCommFinalize(comm_);
      Status s = (r == ncclSuccess || r == ncclInProgress) ? Wait("ncclCommFinalize", /*stream=*/false)
                                                           : NcclError("ncclCommFinalize", r);
      if (!s.ok()) {
        Abort();
        return s;
      }
      r = ncclCommDestroy(comm_);
      comm_ = nullptr;
      if (r != ncclSuccess) return NcclError("ncclCommDestroy", r);
    }
    ReleaseCuda();
    return Status::Ok();
  }

 private:
  Status SetUpCuda(int device) {
    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) return CudaError("cudaSetDevice", e);
    if (cudaError_t e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking); e != cudaSuccess) {
      return CudaError("cudaStreamCreateWithFlags", e);
    }
    if (cudaError_t e = cudaMalloc(&send_, options_.bytes()); e != cudaSuccess) return CudaError("cudaMalloc", e);
    if (cudaError_t e = cudaMalloc(&recv_, options_.bytes()); e != cudaSuccess) return CudaError("cudaMalloc", e);
    return Status::Ok();
  }

  void ReleaseCuda() {
    if (send_ != nullptr) cudaFree(send_);
    if (recv_ != nullptr) cudaFree(recv_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    send_ = recv_ = nullptr;
    stream_ = nullptr;
  }

  Status NcclError(const char* call, ncclResult_t r) const {
    const char* last = ncclGetLastError(comm_);  // comm may be null
    std::string detail = last != nullptr ? last : "";
    std::string text = fmt::format("backend nccl: {}: {}", call, ncclGetErrorString(r));
    if (!detail.empty()) text += " (" + detail + ")";
    return Unavailable(text);
  }

  // Polls until the communicator has no call in progress and, when `stream`,
  // the stream has drained. A peer that died or a link that is cut shows up
  // only as work that never finishes, hence the deadline. Busy-polls, as
  // nccl-tests does, so the wait adds no scheduling latency to the timing.
  Status Wait(const char* what, bool stream) {
    const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
    for (;;) {
      ncclResult_t state = ncclSuccess;
      if (ncclResult_t r = ncclCommGetAsyncError(comm_, &state); r != ncclSuccess) state = r;
      if (state != ncclSuccess && state != ncclInProgress) {
        Status s = NcclError(what, state);
        Abort();
        return s;
      }
      if (state == ncclSuccess) {
        if (!stream) return Status::Ok();
        cudaError_t e = cudaStreamQuery(stream_);
        if (e == cudaSuccess) return Status::Ok();
        if (e != cudaErrorNotReady) {
          Abort();
          return CudaError(what, e);
        }
      }
      if (std::chrono::steady_clock::now() > deadline) {
        Abort();
        return DeadlineExceeded(
            fmt::format("backend nccl: {} did not complete within {} (--timeout); "
                        "communicator aborted",
                        what, FormatDuration(options_.timeout)));
      }
    }
  }

  void Abort() {
    if (comm_ == nullptr) return;
    ncclCommAbort(comm_);
    comm_ = nullptr;
  }

  BackendOptions options_;
  cudaStream_t stream_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

Result<std::unique_ptr<Backend>> MakeNcclBackend(const BackendOptions& options, World& world) {
  auto backend = std::make_unique<NcclBackend>(options);
  if (Status s = backend->Open(world); !s.ok()) return s;
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace fdrill

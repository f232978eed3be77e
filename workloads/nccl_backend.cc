#include "workloads/nccl_backend.h"

#include <chrono>
#include <string>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

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
    case DType::kFloat64:
      return ncclFloat64;
    case DType::kInt32:
      return ncclInt32;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kBfloat16:
      return ncclBfloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t NcclOp(RedOp redop) {
  switch (redop) {
    case RedOp::kSum:
      return ncclSum;
    case RedOp::kProd:
      return ncclProd;
    case RedOp::kMin:
      return ncclMin;
    case RedOp::kMax:
      return ncclMax;
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
    rank_ = world.rank();
    nranks_ = world.size();
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    Status local = Status::Ok();
    if (e != cudaSuccess) {
      local = Unavailable("backend nccl: no CUDA device (cudaGetDeviceCount: " + CudaText(e) + ")");
    } else if (devices == 0) {
      local = Unavailable("backend nccl: no CUDA device (cudaGetDeviceCount: 0 devices)");
    } else if (world.local_rank() >= devices) {
      // NCCL refuses two ranks of one communicator on one GPU.
      local = Unavailable(
          fmt::format("backend nccl: local rank {} needs a GPU of its own, this node has {}",
                      world.local_rank(), devices));
    }
    if (Status s = AgreeAllOk(world, local); !s.ok()) return s;
    if (Status s = AgreeAllOk(world, SetUpCuda(world.local_rank())); !s.ok()) return s;

    ncclUniqueId id{};
    local = Status::Ok();
    if (world.rank() == 0) {
      if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
        local = NcclError("ncclGetUniqueId", r);
    }
    if (Status s = AgreeAllOk(world, local); !s.ok()) return s;
    if (Status s = world.Broadcast(std::as_writable_bytes(std::span(&id, 1)), 0); !s.ok()) return s;

    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // calls return ncclInProgress; we poll with a deadline
    ncclResult_t r = ncclCommInitRankConfig(&comm_, world.size(), id, world.rank(), &config);
    local = (r == ncclSuccess || r == ncclInProgress)
                ? Wait("ncclCommInitRankConfig", /*stream=*/false)
                : NcclError("ncclCommInitRankConfig", r);
    return AgreeAllOk(world, local);
  }

  std::vector<LoadedLibrary> Libraries() const override {
    std::vector<LoadedLibrary> out;
    int nccl = 0;
    if (ncclGetVersion(&nccl) == ncclSuccess)
      out.push_back({"nccl", LibraryValue(NcclVersionText(nccl), LoadedFrom("libnccl.so"))});
    int cudart = 0;
    if (cudaRuntimeGetVersion(&cudart) == cudaSuccess)
      out.push_back(
          {"cudart", LibraryValue(CudaRuntimeVersionText(cudart), LoadedFrom("libcudart.so"))});
    return out;
  }

  Status SetLayout(const Layout& layout) override {
    return SetLayoutWithin(layout, options_, &layout_);
  }

  Status SetInput(std::span<const std::byte> input) override {
    if (Status s = CheckInputSize(input, layout_, options_.dtype); !s.ok()) return s;
    // Same stream as the collective, so the copy is ordered before it.
    cudaError_t e =
        cudaMemcpyAsync(send_, input.data(), input.size(), cudaMemcpyHostToDevice, stream_);
    if (e != cudaSuccess) return CudaError("cudaMemcpyAsync", e);
    return Status::Ok();
  }

  Status Run() override {
    const char* call = "";
    ncclResult_t r = Launch(&call);
    if (r != ncclSuccess && r != ncclInProgress) {
      Status s = NcclError(call, r);
      Abort();
      return s;
    }
    return Wait(call, /*stream=*/true);
  }

  Status GetOutput(std::span<std::byte> output) override {
    if (output.size() != layout_.recv_count * DTypeSize(options_.dtype))
      return Internal("GetOutput: wrong size");
    cudaError_t e =
        cudaMemcpyAsync(output.data(), recv_, output.size(), cudaMemcpyDeviceToHost, stream_);
    if (e != cudaSuccess) return CudaError("cudaMemcpyAsync", e);
    return Wait("cudaMemcpyAsync", /*stream=*/true);
  }

  Status Close() override {
    if (comm_ != nullptr) {
      // Finalize flushes outstanding work; in non-blocking mode it returns
      // ncclInProgress and completes in the background.
      ncclResult_t r = ncclCommFinalize(comm_);
      Status s = (r == ncclSuccess || r == ncclInProgress)
                     ? Wait("ncclCommFinalize", /*stream=*/false)
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
  // Enqueues the op on stream_ and names the NCCL call for errors. On a
  // non-blocking communicator every call may answer ncclInProgress.
  ncclResult_t Launch(const char** call) {
    const ncclDataType_t type = NcclType(options_.dtype);
    const ncclRedOp_t op = NcclOp(options_.redop);
    const size_t all = layout_.send_count;
    const size_t count = layout_.count;
    switch (options_.op) {
      case Op::kAllReduce:
        *call = "ncclAllReduce";
        return ncclAllReduce(send_, recv_, all, type, op, comm_, stream_);
      case Op::kAllGather:
        *call = "ncclAllGather";
        return ncclAllGather(send_, recv_, count, type, comm_, stream_);
      case Op::kReduceScatter:
        *call = "ncclReduceScatter";
        return ncclReduceScatter(send_, recv_, count, type, op, comm_, stream_);
      case Op::kBroadcast:
        *call = "ncclBroadcast";
        return ncclBroadcast(send_, recv_, all, type, options_.root, comm_, stream_);
      case Op::kReduce:
        *call = "ncclReduce";
        return ncclReduce(send_, recv_, all, type, op, options_.root, comm_, stream_);
      case Op::kAllToAll: {
        // One send and one receive of `count` elements per peer, fused.
        *call = "ncclGroupEnd(alltoall)";
        const size_t block = count * DTypeSize(options_.dtype);
        if (ncclResult_t r = ncclGroupStart(); r != ncclSuccess) return r;
        for (int peer = 0; peer < nranks_; ++peer) {
          const auto offset = static_cast<size_t>(peer) * block;
          ncclResult_t r =
              ncclSend(static_cast<const char*>(send_) + offset, count, type, peer, comm_, stream_);
          if (r == ncclSuccess || r == ncclInProgress) {
            r = ncclRecv(static_cast<char*>(recv_) + offset, count, type, peer, comm_, stream_);
          }
          if (r != ncclSuccess && r != ncclInProgress) {
            ncclGroupEnd();
            return r;
          }
        }
        return ncclGroupEnd();
      }
      case Op::kSendRecv: {
        // Ring neighbours: send to the next rank, receive from the previous.
        *call = "ncclGroupEnd(sendrecv)";
        const int next = (rank_ + 1) % nranks_;
        const int prev = (rank_ + nranks_ - 1) % nranks_;
        if (ncclResult_t r = ncclGroupStart(); r != ncclSuccess) return r;
        ncclResult_t r = ncclSend(send_, all, type, next, comm_, stream_);
        if (r == ncclSuccess || r == ncclInProgress)
          r = ncclRecv(recv_, all, type, prev, comm_, stream_);
        if (r != ncclSuccess && r != ncclInProgress) {
          ncclGroupEnd();
          return r;
        }
        return ncclGroupEnd();
      }
    }
    *call = "backend nccl";
    return ncclInvalidArgument;
  }

  Status SetUpCuda(int device) {
    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
      return CudaError("cudaSetDevice", e);
    if (cudaError_t e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
        e != cudaSuccess) {
      return CudaError("cudaStreamCreateWithFlags", e);
    }
    if (cudaError_t e = cudaMalloc(&send_, options_.max_send_bytes); e != cudaSuccess)
      return CudaError("cudaMalloc", e);
    if (cudaError_t e = cudaMalloc(&recv_, options_.max_recv_bytes); e != cudaSuccess)
      return CudaError("cudaMalloc", e);
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
  Layout layout_;
  int rank_ = 0;
  int nranks_ = 1;
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

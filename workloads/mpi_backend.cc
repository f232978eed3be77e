#include "workloads/mpi_backend.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include <mpi.h>

#include "workloads/mpi_ops.h"
#include "workloads/mpi_world.h"

namespace fdrill {

namespace {

class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(const BackendOptions& options)
      : options_(options), send_(options.max_send_bytes), recv_(options.max_recv_bytes) {}
  ~MpiBackend() override {
    FreeMpiReduction(reduction_);
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

  Status Open() {
    if (int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm_); rc != MPI_SUCCESS)
      return MpiError("MPI_Comm_dup", rc);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    Result<MpiReduction> reduction = MakeMpiReduction(options_.dtype, options_.redop);
    if (!reduction.ok()) return reduction.status().Annotate("backend mpi");
    reduction_ = *reduction;
    return Status::Ok();
  }

  // send_ and recv_ hold the options' maxima (the constructor).
  Status SetLayout(const Layout& layout) override {
    return SetLayoutWithin(layout, options_, &layout_);
  }

  Status SetInput(std::span<const std::byte> input) override {
    if (Status s = CheckInputSize(input, layout_, options_.dtype); !s.ok()) return s;
    // MPI_Bcast has one buffer, the root's input: the receive buffer.
    const bool bcast_root = options_.op == Op::kBroadcast && rank_ == options_.root;
    std::memcpy(bcast_root ? recv_.data() : send_.data(), input.data(), input.size());
    return Status::Ok();
  }

  Status Run() override {
    const MPI_Datatype type = reduction_.type;
    const MPI_Op op = reduction_.op;
    const int all = static_cast<int>(layout_.send_count);  // send = recv for the ops that use it
    const int count = static_cast<int>(layout_.count);
    void* send = send_.data();
    void* recv = recv_.data();
    switch (options_.op) {
      case Op::kAllReduce:
        return Check("MPI_Allreduce", MPI_Allreduce(send, recv, all, type, op, comm_));
      case Op::kAllGather:
        return Check("MPI_Allgather", MPI_Allgather(send, count, type, recv, count, type, comm_));
      case Op::kReduceScatter:
        return Check("MPI_Reduce_scatter_block",
                     MPI_Reduce_scatter_block(send, recv, count, type, op, comm_));
      case Op::kBroadcast:
        return Check("MPI_Bcast", MPI_Bcast(recv, all, type, options_.root, comm_));
      case Op::kReduce:
        return Check("MPI_Reduce", MPI_Reduce(send, recv, all, type, op, options_.root, comm_));
      case Op::kAllToAll:
        return Check("MPI_Alltoall", MPI_Alltoall(send, count, type, recv, count, type, comm_));
      case Op::kSendRecv: {
        // Ring neighbours: send to the next rank, receive from the previous.
        const int next = (rank_ + 1) % size_;
        const int prev = (rank_ + size_ - 1) % size_;
        return Check("MPI_Sendrecv", MPI_Sendrecv(send, all, type, next, 0, recv, all, type, prev,
                                                  0, comm_, MPI_STATUS_IGNORE));
      }
    }
    return Internal("backend mpi: unknown op");
  }

  std::span<std::byte> HostInput() override {
    const bool bcast_root = options_.op == Op::kBroadcast && rank_ == options_.root;
    return std::span(bcast_root ? recv_ : send_)
        .first(layout_.send_count * DTypeSize(options_.dtype));
  }
  std::span<std::byte> HostOutput() override {
    return std::span(recv_).first(layout_.recv_count * DTypeSize(options_.dtype));
  }

  Status GetOutput(std::span<std::byte> output) override {
    if (output.size() != layout_.recv_count * DTypeSize(options_.dtype))
      return Internal("GetOutput: wrong size");
    std::memcpy(output.data(), recv_.data(), output.size());
    return Status::Ok();
  }

  Status Close() override {
    FreeMpiReduction(reduction_);
    if (comm_ == MPI_COMM_NULL) return Status::Ok();
    if (int rc = MPI_Comm_free(&comm_); rc != MPI_SUCCESS) return MpiError("MPI_Comm_free", rc);
    return Status::Ok();
  }

 private:
  static Status Check(const char* call, int rc) {
    return rc == MPI_SUCCESS ? Status::Ok() : MpiError(call, rc);
  }

  BackendOptions options_;
  std::vector<std::byte> send_;
  std::vector<std::byte> recv_;
  Layout layout_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MpiReduction reduction_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

Result<std::unique_ptr<Backend>> MakeMpiBackend(const BackendOptions& options, World& world) {
  Status local = Status::Ok();
  const uint64_t element = DTypeSize(options.dtype);
  if (std::max(options.max_send_bytes, options.max_recv_bytes) / element >
      static_cast<uint64_t>(INT_MAX)) {
    // MPI-3 counts are int; a larger message needs derived types (not yet).
    local =
        InvalidArgument("backend mpi: at most " + std::to_string(INT_MAX) + " elements per buffer");
  }
  if (Status s = AgreeAllOk(world, local); !s.ok()) return s;
  auto backend = std::make_unique<MpiBackend>(options);
  if (Status s = AgreeAllOk(world, backend->Open()); !s.ok()) return s;
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace fdrill

#include "workloads/mpi_backend.h"

#include <mpi.h>

#include <climits>
#include <cstring>
#include <vector>

#include "workloads/mpi_world.h"

namespace fdrill {

namespace {

MPI_Datatype MpiType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return MPI_FLOAT;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op MpiOp(RedOp redop) {
  switch (redop) {
    case RedOp::kSum:
      return MPI_SUM;
  }
  return MPI_OP_NULL;
}

class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(const BackendOptions& options)
      : options_(options), send_(options.bytes()), recv_(options.bytes()) {}
  ~MpiBackend() override {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

  Status Open() {
    if (int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm_); rc != MPI_SUCCESS) return MpiError("MPI_Comm_dup", rc);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    return Status::Ok();
  }

  Status SetInput(std::span<const std::byte> input) override {
    if (input.size() != send_.size()) return Internal("SetInput: wrong buffer size");
    std::memcpy(send_.data(), input.data(), input.size());
    return Status::Ok();
  }

  Status Run() override {
    const int count = static_cast<int>(options_.count);
    int rc = MPI_SUCCESS;
    switch (options_.op) {
      case Op::kAllReduce:
        rc = MPI_Allreduce(send_.data(), recv_.data(), count, MpiType(options_.dtype), MpiOp(options_.redop), comm_);
        break;
    }
    if (rc != MPI_SUCCESS) return MpiError("MPI_Allreduce", rc);
    return Status::Ok();
  }

  Status GetOutput(std::span<std::byte> output) override {
    if (output.size() != recv_.size()) return Internal("GetOutput: wrong buffer size");
    std::memcpy(output.data(), recv_.data(), output.size());
    return Status::Ok();
  }

  Status Close() override {
    if (comm_ == MPI_COMM_NULL) return Status::Ok();
    if (int rc = MPI_Comm_free(&comm_); rc != MPI_SUCCESS) return MpiError("MPI_Comm_free", rc);
    return Status::Ok();
  }

 private:
  BackendOptions options_;
  std::vector<std::byte> send_;
  std::vector<std::byte> recv_;
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

Result<std::unique_ptr<Backend>> MakeMpiBackend(const BackendOptions& options, World& world) {
  Status local = Status::Ok();
  if (options.count > static_cast<uint64_t>(INT_MAX)) {
    // MPI-3 counts are int; a larger message needs derived types (not yet).
    local = InvalidArgument("backend mpi: at most " + std::to_string(INT_MAX) + " elements per message");
  }
  if (Status s = AgreeAllOk(world, local); !s.ok()) return s;
  auto backend = std::make_unique<MpiBackend>(options);
  if (Status s = AgreeAllOk(world, backend->Open()); !s.ok()) return s;
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace fdrill

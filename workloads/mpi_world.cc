#include "workloads/mpi_world.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace fdrill {

Status MpiError(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(code, text, &len);
  return Unavailable(std::string(call) + ": " + std::string(text, static_cast<size_t>(len)));
}

Result<std::unique_ptr<MpiWorld>> MpiWorld::Init(int* argc, char*** argv) {
  // MPI_Init's own failures abort the process (the handler is not set yet).
  MPI_Init(argc, argv);
  std::unique_ptr<MpiWorld> world(new MpiWorld());
  if (int rc = MPI_Comm_dup(MPI_COMM_WORLD, &world->comm_); rc != MPI_SUCCESS)
    return MpiError("MPI_Comm_dup", rc);
  MPI_Comm_set_errhandler(world->comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(world->comm_, &world->rank_);
  MPI_Comm_size(world->comm_, &world->size_);

  // The local rank from the ranks that share memory with us: portable across
  // launchers, unlike OMPI_COMM_WORLD_LOCAL_RANK.
  MPI_Comm node = MPI_COMM_NULL;
  if (int rc = MPI_Comm_split_type(world->comm_, MPI_COMM_TYPE_SHARED, world->rank_, MPI_INFO_NULL,
                                   &node);
      rc != MPI_SUCCESS) {
    return MpiError("MPI_Comm_split_type", rc);
  }
  MPI_Comm_rank(node, &world->local_rank_);
  MPI_Comm_free(&node);
  return world;
}

MpiWorld::~MpiWorld() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  MPI_Finalize();
}

Result<int64_t> MpiWorld::MaxInt64(int64_t value) {
  int64_t out = 0;
  if (int rc = MPI_Allreduce(&value, &out, 1, MPI_INT64_T, MPI_MAX, comm_); rc != MPI_SUCCESS) {
    return MpiError("MPI_Allreduce(max)", rc);
  }
  return out;
}

Status MpiWorld::Barrier() {
  if (int rc = MPI_Barrier(comm_); rc != MPI_SUCCESS) return MpiError("MPI_Barrier", rc);
  return Status::Ok();
}

Status MpiWorld::StartMaxInt64(int64_t value) {
  if (pending_ != MPI_REQUEST_NULL) return Internal("StartMaxInt64 while one is outstanding");
  pending_in_ = value;
  if (int rc =
          MPI_Iallreduce(&pending_in_, &pending_out_, 1, MPI_INT64_T, MPI_MAX, comm_, &pending_);
      rc != MPI_SUCCESS) {
    return MpiError("MPI_Iallreduce(max)", rc);
  }
  return Status::Ok();
}

Result<int64_t> MpiWorld::FinishMaxInt64() {
  if (pending_ == MPI_REQUEST_NULL) return Internal("FinishMaxInt64 without StartMaxInt64");
  if (int rc = MPI_Wait(&pending_, MPI_STATUS_IGNORE); rc != MPI_SUCCESS)
    return MpiError("MPI_Wait", rc);
  return pending_out_;
}

Result<int64_t> MpiWorld::SumInt64(int64_t value) {
  int64_t out = 0;
  if (int rc = MPI_Allreduce(&value, &out, 1, MPI_INT64_T, MPI_SUM, comm_); rc != MPI_SUCCESS) {
    return MpiError("MPI_Allreduce(sum)", rc);
  }
  return out;
}

Result<double> MpiWorld::SumDouble(double value) {
  double out = 0;
  if (int rc = MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_SUM, comm_); rc != MPI_SUCCESS) {
    return MpiError("MPI_Allreduce(sum)", rc);
  }
  return out;
}

Status MpiWorld::Broadcast(std::span<std::byte> bytes, int root) {
  if (int rc = MPI_Bcast(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, root, comm_);
      rc != MPI_SUCCESS) {
    return MpiError("MPI_Bcast", rc);
  }
  return Status::Ok();
}

Result<std::vector<std::string>> MpiWorld::GatherToRoot(const std::string& text) {
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(rank_ == 0 ? static_cast<size_t>(size_) : 0);
  if (int rc = MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm_);
      rc != MPI_SUCCESS) {
    return MpiError("MPI_Gather", rc);
  }
  std::vector<int> offsets(lengths.size());
  int total = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    offsets[i] = total;
    total += lengths[i];
  }
  std::string all(static_cast<size_t>(total), '\0');
  if (int rc = MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(),
                           offsets.data(), MPI_CHAR, 0, comm_);
      rc != MPI_SUCCESS) {
    return MpiError("MPI_Gatherv", rc);
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < lengths.size(); ++i)
    out.push_back(all.substr(static_cast<size_t>(offsets[i]), static_cast<size_t>(lengths[i])));
  return out;
}

std::string MpiLibraryVersion() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS) return "";
  // Open MPI counts the terminating NUL in len; stop at it.
  return std::string(text, strnlen(text, static_cast<size_t>(len)));
}

void MpiWorld::Abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

}  // namespace fdrill

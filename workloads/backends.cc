#include "workloads/backends.h"

#include <array>

#include "workloads/mpi_backend.h"
#if FDRILL_WITH_NCCL
#include "workloads/nccl_backend.h"
#endif

namespace fdrill {

namespace {

using Factory = Result<std::unique_ptr<Backend>> (*)(const BackendOptions&, World&);

struct BackendRow {
  std::string_view name;
  Factory make;  // null: known, but this binary was built without it
  std::string_view missing_hint;
};

// FDRILL_WITH_NCCL (0 or 1) comes from workloads/CMakeLists.txt; this table is
// the only place that depends on it.
const std::array<BackendRow, 2> kBackends = {{
    {"mpi", MakeMpiBackend, ""},
#if FDRILL_WITH_NCCL
    {"nccl", MakeNcclBackend, ""},
#else
    {"nccl", nullptr, "NCCL (CUDA and NCCL were not found at build time)"},
#endif
}};

const BackendRow* Find(std::string_view name) {
  for (const auto& row : kBackends) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

}  // namespace

std::string BuiltBackendNames() {
  std::string out;
  for (const auto& row : kBackends) {
    if (row.make == nullptr) continue;
    if (!out.empty()) out += " ";
    out += row.name;
  }
  return out;
}

Status CheckBackend(std::string_view name) {
  const BackendRow* row = Find(name);
  if (row == nullptr) {
    std::string known;
    for (const auto& r : kBackends) known += (known.empty() ? "" : ", ") + std::string(r.name);
    return InvalidArgument("unknown --backend \"" + std::string(name) + "\": accepted: " + known);
  }
  if (row->make == nullptr) {
    return Unsupported("--backend " + std::string(name) + ": this binary was built without " +
                       std::string(row->missing_hint) + "; built backends: " + BuiltBackendNames());
  }
  return Status::Ok();
}

BackendOptions BackendOptionsFor(const Config& config, const std::vector<SizeStep>& plan) {
  BackendOptions options;
  options.op = config.op;
  options.dtype = config.dtype;
  options.redop = config.redop;
  options.root = config.root;
  options.max_send_bytes = MaxSendBytes(plan, config.dtype);
  options.max_recv_bytes = MaxRecvBytes(plan, config.dtype);
  options.timeout = config.timeout;
  return options;
}

Result<std::unique_ptr<Backend>> MakeBackend(std::string_view name, const BackendOptions& options,
                                             World& world) {
  if (Status s = CheckBackend(name); !s.ok()) return s;
  return Find(name)->make(options, world);
}

}  // namespace fdrill

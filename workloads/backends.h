// The one list of backends fdrill-collective knows, and which of them this
// binary was built with (NCCL only when CUDA and NCCL were found at build
// time). Thread-safe; MakeBackend is collective (see backend.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/core/result.h"
#include "workloads/backend.h"
#include "workloads/config.h"
#include "workloads/plan.h"
#include "workloads/world.h"

namespace fdrill {

// "mpi" or "mpi nccl", for --version.
std::string BuiltBackendNames();

// Ok when `name` is a backend this binary can run. Otherwise says whether
// the name is unknown (listing the known ones) or was left out of this build.
Status CheckBackend(std::string_view name);

// The options for running `plan` with `config`: its op, dtype, redop, root
// and timeout, and buffers for its largest size.
BackendOptions BackendOptionsFor(const Config& config, const std::vector<SizeStep>& plan);

Result<std::unique_ptr<Backend>> MakeBackend(std::string_view name, const BackendOptions& options,
                                             World& world);

}  // namespace fdrill

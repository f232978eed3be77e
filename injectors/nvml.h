// What the NVML injectors (nvlink_bw_mode, gpu_clock_lock, gpu_power_cap)
// share on top of Host::gpus (common/host/gpus.h): reading a GPU index,
// the capability probe, and the null Gpus of a host without NVML.
#pragma once

#include <string>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/host/gpus.h"
#include "common/host/host.h"
#include "injectors/params.h"

namespace fdrill {

// The largest params.gpu accepted before NVML is asked (it gives the real count).
constexpr unsigned kMaxGpuIndex = 1023;

// host.gpus, or, where the host has none (the controller validating params,
// a fake machine), a Gpus whose every call is Unsupported ("no NVML on this
// host"): a fault can be built and planned anywhere, and fails only when it
// would touch a GPU.
Gpus& GpusOf(const Host& host);

// Reads a required integer param in [min, max]; `what` says what it is
// ("a clock in MHz") in the error for a missing key.
Result<unsigned> ReadRequiredUint(ParamReader& p, const Json& params, const std::string& key,
                                  unsigned min, unsigned max, const std::string& what);
// Reads params.gpu (required, 0..kMaxGpuIndex).
Result<unsigned> ReadGpuIndex(ParamReader& p, const Json& params);

// The shared part of the three NVML probes: the host's NVML opens, exports
// every one of `symbols`, and params.gpu (when given) names an existing GPU.
Status ProbeNvml(const Json& params, const Host& host, const std::vector<std::string>& symbols);

}  // namespace fdrill

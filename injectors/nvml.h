// What the NVML injectors (nvlink_bw_mode, gpu_clock_lock, gpu_power_cap)
// share on top of Host::gpus (harness/host/gpus.h): reading a GPU index,
// the capability probe, the null Gpus of a host without NVML, and NVLink
// observation.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/core/json.h"
#include "harness/core/result.h"
#include "harness/host/gpus.h"
#include "harness/host/host.h"
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

// One NVLink's observed state: what the agent records before and after a
// fault. Counters are cumulative since the driver last reset them (diff two
// samples; never reset them from here). A counter the link does not report
// is absent from `errors`.
struct NvLinkSample {
  unsigned link = 0;
  bool active = false;
  std::vector<std::pair<std::string, unsigned long long>> errors;  // "dl_replay" -> n
};
// Every link of GPU `gpu` that NVML reports (links it answers NOT_SUPPORTED
// or INVALID_ARGUMENT for are absent). Reads only.
Result<std::vector<NvLinkSample>> ObserveNvLinks(Gpus& gpus, unsigned gpu);
Json NvLinkSamplesJson(const std::vector<NvLinkSample>& links);

}  // namespace fdrill

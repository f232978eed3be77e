// Nvml: the driver's NVML library, opened at run time (dlopen), never linked.
//
// Contract:
//  - One Nvml per library path for the whole process (NvmlAt); it is opened
//    on first use, nvmlInit_v2 runs once, and it is never closed (as NCCL
//    does: the driver library stays for the process lifetime).
//  - Thread-safe: every NVML call goes through one mutex per library, since
//    NVML "has had some thread safety bugs" (NCCL src/misc/nvmlwrap.cc).
//  - A symbol the library lacks (an older driver) is a null pointer; calling
//    it returns Unsupported naming the symbol, and nothing else fails.
//  - Errors carry NVML's own text (nvmlErrorString) and the call's name.
//
// Which library: NvmlLibraryPath() is $FDRILL_NVML_LIBRARY when set, else
// "libnvidia-ml.so.1" (the driver's SONAME; the unversioned .so is only in
// dev packages). It is an environment variable of the agent, not a scenario
// param, on purpose: a param would let any scenario make the root agent
// dlopen a file of its choosing. Tests set it to the fake library.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/wire/wire.h"
#include "injectors/nvml_api.h"
#include "injectors/params.h"

namespace fdrill {

std::string NvmlLibraryPath();

// The largest params.gpu accepted before NVML is asked (it gives the real count).
constexpr unsigned kMaxGpuIndex = 1023;

class Nvml {
 public:
  explicit Nvml(std::string library) : library_(std::move(library)) {}
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  const std::string& library() const { return library_; }

  // Opens the library and runs nvmlInit_v2 (once). Unsupported
  // ("<library> not found: <dlerror>") when it cannot be opened.
  Status Load();
  // Whether the loaded library exports `symbol` (false before Load()).
  bool Has(const std::string& symbol);

  Result<unsigned> DeviceCount();
  // NotFound naming params.gpu and the count when the index is out of range.
  Status CheckGpu(unsigned gpu);

  // NVLink bandwidth mode, system-wide (Hopper+) and per device (Blackwell+).
  Result<unsigned> SystemNvlinkBwMode();
  Status SetSystemNvlinkBwMode(unsigned mode);
  struct DeviceBwMode {
    unsigned mode = 0;
    bool is_best = false;
  };
  Result<DeviceBwMode> DeviceNvlinkBwMode(unsigned gpu);
  Result<std::vector<unsigned>> DeviceSupportedNvlinkBwModes(unsigned gpu);
  Status SetDeviceNvlinkBwMode(unsigned gpu, DeviceBwMode mode);

  // Clocks (MHz).
  Status SetGpuLockedClocks(unsigned gpu, unsigned min_mhz, unsigned max_mhz);
  Status ResetGpuLockedClocks(unsigned gpu);
  Result<unsigned> ClockMhz(unsigned gpu, nvmlClockType_t type);
  Result<unsigned> MaxClockMhz(unsigned gpu, nvmlClockType_t type);
  Result<unsigned long long> ClocksEventReasons(unsigned gpu);

  // Power management limit (milliwatts).
  Result<unsigned> PowerLimitMw(unsigned gpu);
  struct PowerRange {
    unsigned min_mw = 0;
    unsigned max_mw = 0;
  };
  Result<PowerRange> PowerLimitConstraintsMw(unsigned gpu);
  Status SetPowerLimitMw(unsigned gpu, unsigned mw);

  // NVLink observation. A link that does not exist reads as NOT_SUPPORTED or
  // INVALID_ARGUMENT; callers see those as Unsupported / InvalidArgument.
  Result<bool> NvLinkActive(unsigned gpu, unsigned link);
  Result<unsigned long long> NvLinkErrorCounter(unsigned gpu, unsigned link, nvmlNvLinkErrorCounter_t counter);
  // The PCI address of what NVLink `link` of `gpu` reaches (a peer GPU, or an
  // NVSwitch), "00000000:18:00.0" as NVML prints it.
  Result<std::string> NvLinkRemotePciBusId(unsigned gpu, unsigned link);

  // Inventory: "NVIDIA H100 80GB HBM3", "GPU-5f3c...", "00000000:18:00.0".
  Result<std::string> DeviceName(unsigned gpu);
  Result<std::string> DeviceUuid(unsigned gpu);
  Result<std::string> PciBusId(unsigned gpu);

  // nvmlDeviceGetFieldValues: one call for many (field, scope) pairs. The
  // call failing is an error; a field it cannot read is a per-entry status
  // (Unsupported for a link or counter the GPU lacks). Values of any NVML
  // type come back as unsigned 64-bit (a double is truncated; negative: 0).
  struct FieldRequest {
    unsigned field = 0;
    unsigned scope = 0;  // the NVLink for per-link fields
  };
  struct FieldValue {
    Status status;
    unsigned long long value = 0;
  };
  Result<std::vector<FieldValue>> FieldValues(unsigned gpu, const std::vector<FieldRequest>& fields);

 private:
  struct Api;
  Status LoadLocked();
  static constexpr int kNoGpu = -1;
  // Under mu_: loads, checks that `fn` was resolved, and returns GPU `gpu`'s
  // handle (null for kNoGpu).
  template <typename Fn>
  Result<nvmlDevice_t> Ready(Fn Api::*fn, const char* symbol, int gpu);
  Status Check(nvmlReturn_t r, const char* call) const;

  std::string library_;
  std::mutex mu_;
  void* handle_ = nullptr;
  std::shared_ptr<Api> api_;
  bool initialized_ = false;
};

// The process-wide Nvml for `library` (created on first call; never freed).
Nvml& NvmlAt(const std::string& library);

// Reads a required integer param in [min, max]; `what` says what it is
// ("a clock in MHz") in the error for a missing key.
Result<unsigned> ReadRequiredUint(ParamReader& p, const Json& params, const std::string& key, unsigned min,
                                  unsigned max, const std::string& what);
// Reads params.gpu (required, 0..kMaxGpuIndex).
Result<unsigned> ReadGpuIndex(ParamReader& p, const Json& params);

// The shared part of the three NVML probes: the library opens, exports every
// one of `symbols`, and params.gpu (when given) names an existing GPU.
Status ProbeNvml(const Json& params, const std::vector<std::string>& symbols);

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
Result<std::vector<NvLinkSample>> ObserveNvLinks(Nvml& nvml, unsigned gpu);
Json NvLinkSamplesJson(const std::vector<NvLinkSample>& links);

}  // namespace fdrill

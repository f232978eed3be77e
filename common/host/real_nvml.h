// Nvml: the real Gpus (host/gpus.h): the driver's NVML library, opened at run
// time (dlopen), never linked. The only file that calls NVML.
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

#include "common/core/result.h"
#include "common/host/gpus.h"
#include "common/host/nvml_api.h"

namespace fdrill {

std::string NvmlLibraryPath();

class Nvml final : public Gpus {
 public:
  explicit Nvml(std::string library) : library_(std::move(library)) {}
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  const std::string& library() const override { return library_; }

  // Unsupported ("<library> not found: <dlerror>") when it cannot be opened.
  Status Load() override;
  bool Has(const std::string& symbol) override;

  Result<unsigned> DeviceCount() override;
  Status CheckGpu(unsigned gpu) override;

  Result<unsigned> SystemNvlinkBwMode() override;
  Status SetSystemNvlinkBwMode(unsigned mode) override;
  Result<DeviceBwMode> DeviceNvlinkBwMode(unsigned gpu) override;
  Result<std::vector<unsigned>> DeviceSupportedNvlinkBwModes(unsigned gpu) override;
  Status SetDeviceNvlinkBwMode(unsigned gpu, DeviceBwMode mode) override;

  Status SetGpuLockedClocks(unsigned gpu, unsigned min_mhz, unsigned max_mhz) override;
  Status ResetGpuLockedClocks(unsigned gpu) override;
  Result<unsigned> ClockMhz(unsigned gpu, nvmlClockType_t type) override;
  Result<unsigned> MaxClockMhz(unsigned gpu, nvmlClockType_t type) override;
  Result<unsigned long long> ClocksEventReasons(unsigned gpu) override;

  Result<unsigned> PowerLimitMw(unsigned gpu) override;
  Result<PowerRange> PowerLimitConstraintsMw(unsigned gpu) override;
  Status SetPowerLimitMw(unsigned gpu, unsigned mw) override;

  Result<bool> NvLinkActive(unsigned gpu, unsigned link) override;
  Result<unsigned long long> NvLinkErrorCounter(unsigned gpu, unsigned link,
                                                nvmlNvLinkErrorCounter_t counter) override;
  Result<std::string> NvLinkRemotePciBusId(unsigned gpu, unsigned link) override;

  Result<std::string> DeviceName(unsigned gpu) override;
  Result<std::string> DeviceUuid(unsigned gpu) override;
  Result<std::string> PciBusId(unsigned gpu) override;

  Result<std::vector<FieldValue>> FieldValues(unsigned gpu,
                                              const std::vector<FieldRequest>& fields) override;

 private:
  struct Api;
  Status LoadLocked();
  static constexpr int kNoGpu = -1;
  // Under mu_: loads, checks that `fn` was resolved, and returns GPU `gpu`'s
  // handle (null for kNoGpu).
  template <typename Fn>
  Result<nvmlDevice_t> Ready(Fn Api::*fn, const char* symbol, int gpu);
  Status Check(nvmlReturn_t r, const char* call) const;
  // Under mu_: Ready, then `fn` called with GPU `gpu`'s handle and `args`;
  // NVML's error names `symbol`.
  template <typename Fn, typename... Args>
  Status DeviceCall(Fn Api::*fn, const char* symbol, unsigned gpu, Args... args);
  // A GPU's text that `fn` writes into a buffer of `size` bytes (its name,
  // its UUID), without the NUL.
  template <typename Fn>
  Result<std::string> DeviceText(Fn Api::*fn, const char* symbol, unsigned gpu, size_t size);

  std::string library_;
  std::mutex mu_;
  void* handle_ = nullptr;
  std::shared_ptr<Api> api_;
  bool initialized_ = false;
};

// The process-wide Nvml for `library` (created on first call; never freed).
// An agent's Host::gpus is NvmlAt(NvmlLibraryPath()).
Nvml& NvmlAt(const std::string& library);

}  // namespace fdrill

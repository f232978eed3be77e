// Gpus: the node's NVIDIA GPUs as NVML sees them, the one door injectors and
// agents use to reach NVML (Host::gpus). The real one is Nvml
// (host/real_nvml.h: the driver's libnvidia-ml, opened with dlopen, never
// linked); tests load a fake library into that same Nvml
// (tests/fakes/fake_nvml.h), so the dlopen path is what they exercise.
//
// Contract, for every implementation:
//  - Thread-safe: the agent's sessions and its telemetry call concurrently.
//  - GPUs are NVML's indices (as nvidia-smi numbers them).
//  - An operation the driver cannot do (an older driver lacks the symbol, a
//    GPU lacks the feature) is Unsupported; an index past the count is
//    NotFound (CheckGpu); errors carry NVML's text and the call's name.
//  - Nothing is reset or changed except by the Set*/Reset* calls.
#pragma once

#include <string>
#include <vector>

#include "common/core/result.h"
#include "common/host/nvml_api.h"

namespace fdrill {

class Gpus {
 public:
  virtual ~Gpus() = default;

  // What is behind this door, for messages ("libnvidia-ml.so.1").
  virtual const std::string& library() const = 0;
  // Opens NVML and initialises it (once). Unsupported, saying why, when
  // there is none on this node.
  virtual Status Load() = 0;
  // Whether the loaded library exports `symbol` (false before Load()).
  virtual bool Has(const std::string& symbol) = 0;

  virtual Result<unsigned> DeviceCount() = 0;
  // NotFound naming params.gpu and the count when the index is out of range.
  virtual Status CheckGpu(unsigned gpu) = 0;

  // NVLink bandwidth mode, system-wide (Hopper+) and per device (Blackwell+).
  virtual Result<unsigned> SystemNvlinkBwMode() = 0;
  virtual Status SetSystemNvlinkBwMode(unsigned mode) = 0;
  struct DeviceBwMode {
    unsigned mode = 0;
    bool is_best = false;
  };
  virtual Result<DeviceBwMode> DeviceNvlinkBwMode(unsigned gpu) = 0;
  virtual Result<std::vector<unsigned>> DeviceSupportedNvlinkBwModes(unsigned gpu) = 0;
  virtual Status SetDeviceNvlinkBwMode(unsigned gpu, DeviceBwMode mode) = 0;

  // Clocks (MHz).
  virtual Status SetGpuLockedClocks(unsigned gpu, unsigned min_mhz, unsigned max_mhz) = 0;
  virtual Status ResetGpuLockedClocks(unsigned gpu) = 0;
  virtual Result<unsigned> ClockMhz(unsigned gpu, nvmlClockType_t type) = 0;
  virtual Result<unsigned> MaxClockMhz(unsigned gpu, nvmlClockType_t type) = 0;
  virtual Result<unsigned long long> ClocksEventReasons(unsigned gpu) = 0;

  // Power management limit (milliwatts).
  virtual Result<unsigned> PowerLimitMw(unsigned gpu) = 0;
  struct PowerRange {
    unsigned min_mw = 0;
    unsigned max_mw = 0;
  };
  virtual Result<PowerRange> PowerLimitConstraintsMw(unsigned gpu) = 0;
  virtual Status SetPowerLimitMw(unsigned gpu, unsigned mw) = 0;

  // NVLink observation. A link that does not exist reads as NOT_SUPPORTED or
  // INVALID_ARGUMENT; callers see those as Unsupported / InvalidArgument.
  virtual Result<bool> NvLinkActive(unsigned gpu, unsigned link) = 0;
  virtual Result<unsigned long long> NvLinkErrorCounter(unsigned gpu, unsigned link,
                                                        nvmlNvLinkErrorCounter_t counter) = 0;
  // The PCI address of what NVLink `link` of `gpu` reaches (a peer GPU, or an
  // NVSwitch), "00000000:18:00.0" as NVML prints it.
  virtual Result<std::string> NvLinkRemotePciBusId(unsigned gpu, unsigned link) = 0;

  // Inventory: "NVIDIA H100 80GB HBM3", "GPU-5f3c...", "00000000:18:00.0".
  virtual Result<std::string> DeviceName(unsigned gpu) = 0;
  virtual Result<std::string> DeviceUuid(unsigned gpu) = 0;
  virtual Result<std::string> PciBusId(unsigned gpu) = 0;

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
  virtual Result<std::vector<FieldValue>> FieldValues(unsigned gpu,
                                                      const std::vector<FieldRequest>& fields) = 0;
};

}  // namespace fdrill

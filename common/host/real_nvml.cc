#include "common/host/real_nvml.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>

namespace fdrill {

namespace {
constexpr char kDefaultLibrary[] = "libnvidia-ml.so.1";

// A versioned struct's version word carries its size in the low 24 bits: a
// declaration that drifts from nvml.h's layout fails here, not in the driver.
static_assert(sizeof(nvmlNvlinkSupportedBwModes_v1_t) ==
              (nvmlNvlinkSupportedBwModes_v1 & 0xFFFFFF));
static_assert(sizeof(nvmlNvlinkGetBwMode_v1_t) == (nvmlNvlinkGetBwMode_v1 & 0xFFFFFF));
static_assert(sizeof(nvmlNvlinkSetBwMode_v1_t) == (nvmlNvlinkSetBwMode_v1 & 0xFFFFFF));

// Resolves `name` into `fn` (a function-pointer member); null when absent.
template <typename Fn>
void Resolve(void* handle, const char* name, Fn& fn, std::map<std::string, bool>& found) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  found[name] = fn != nullptr;
}

// NVML fills fixed buffers with NUL-terminated text; never read past one.
std::string CString(const char* buf, size_t size) { return std::string(buf, strnlen(buf, size)); }

unsigned long long FieldAsUint64(const nvmlFieldValue_t& v) {
  switch (v.valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
      return v.value.dVal > 0 ? static_cast<unsigned long long>(v.value.dVal) : 0;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return v.value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return v.value.ulVal;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return v.value.sllVal > 0 ? static_cast<unsigned long long>(v.value.sllVal) : 0;
    case NVML_VALUE_TYPE_SIGNED_INT:
      return v.value.siVal > 0 ? static_cast<unsigned long long>(v.value.siVal) : 0;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
      return v.value.usVal;
    default:
      return v.value.ullVal;  // UNSIGNED_LONG_LONG, the throughput counters' type
  }
}

Status Missing(const std::string& library, const char* symbol) {
  return Unsupported(library + " has no " + symbol + " (driver too old for this mechanism)");
}
}  // namespace

std::string NvmlLibraryPath() {
  const char* env = std::getenv("FDRILL_NVML_LIBRARY");
  return env && *env ? env : kDefaultLibrary;
}

struct Nvml::Api {
  std::map<std::string, bool> found;
  nvmlInit_v2_fn init = nullptr;
  nvmlErrorString_fn error_string = nullptr;
  nvmlDeviceGetCount_v2_fn get_count = nullptr;
  nvmlDeviceGetHandleByIndex_v2_fn get_handle = nullptr;
  nvmlSystemGetNvlinkBwMode_fn sys_get_bw = nullptr;
  nvmlSystemSetNvlinkBwMode_fn sys_set_bw = nullptr;
  nvmlDeviceGetNvlinkSupportedBwModes_fn dev_supported_bw = nullptr;
  nvmlDeviceGetNvlinkBwMode_fn dev_get_bw = nullptr;
  nvmlDeviceSetNvlinkBwMode_fn dev_set_bw = nullptr;
  nvmlDeviceSetGpuLockedClocks_fn set_locked = nullptr;
  nvmlDeviceResetGpuLockedClocks_fn reset_locked = nullptr;
  nvmlDeviceGetClockInfo_fn clock_info = nullptr;
  nvmlDeviceGetMaxClockInfo_fn max_clock_info = nullptr;
  nvmlDeviceGetCurrentClocksEventReasons_fn event_reasons = nullptr;
  nvmlDeviceGetPowerManagementLimit_fn get_power = nullptr;
  nvmlDeviceGetPowerManagementLimitConstraints_fn power_range = nullptr;
  nvmlDeviceSetPowerManagementLimit_fn set_power = nullptr;
  nvmlDeviceGetNvLinkState_fn link_state = nullptr;
  nvmlDeviceGetNvLinkErrorCounter_fn link_errors = nullptr;
  nvmlDeviceGetNvLinkRemotePciInfo_v2_fn link_remote_pci = nullptr;
  nvmlDeviceGetName_fn name = nullptr;
  nvmlDeviceGetUUID_fn uuid = nullptr;
  nvmlDeviceGetPciInfo_v3_fn pci = nullptr;
  nvmlDeviceGetFieldValues_fn field_values = nullptr;
};

Status Nvml::Load() {
  std::lock_guard<std::mutex> lock(mu_);
  return LoadLocked();
}

Status Nvml::LoadLocked() {
  if (initialized_) return Status::Ok();
  if (!handle_) {
    dlerror();
    void* h = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror();
      return Unsupported(library_ + " not found: " + (why ? why : "dlopen failed") +
                         " (no NVIDIA driver on this node, or set FDRILL_NVML_LIBRARY)");
    }
    auto api = std::make_shared<Api>();
    auto& f = api->found;
    Resolve(h, "nvmlInit_v2", api->init, f);
    Resolve(h, "nvmlErrorString", api->error_string, f);
    Resolve(h, "nvmlDeviceGetCount_v2", api->get_count, f);
    Resolve(h, "nvmlDeviceGetHandleByIndex_v2", api->get_handle, f);
    Resolve(h, "nvmlSystemGetNvlinkBwMode", api->sys_get_bw, f);
    Resolve(h, "nvmlSystemSetNvlinkBwMode", api->sys_set_bw, f);
    Resolve(h, "nvmlDeviceGetNvlinkSupportedBwModes", api->dev_supported_bw, f);
    Resolve(h, "nvmlDeviceGetNvlinkBwMode", api->dev_get_bw, f);
    Resolve(h, "nvmlDeviceSetNvlinkBwMode", api->dev_set_bw, f);
    Resolve(h, "nvmlDeviceSetGpuLockedClocks", api->set_locked, f);
    Resolve(h, "nvmlDeviceResetGpuLockedClocks", api->reset_locked, f);
    Resolve(h, "nvmlDeviceGetClockInfo", api->clock_info, f);
    Resolve(h, "nvmlDeviceGetMaxClockInfo", api->max_clock_info, f);
    Resolve(h, "nvmlDeviceGetCurrentClocksEventReasons", api->event_reasons, f);
    if (!api->event_reasons) {  // the same call under its pre-535 name
      Resolve(h, "nvmlDeviceGetCurrentClocksThrottleReasons", api->event_reasons, f);
      f["nvmlDeviceGetCurrentClocksEventReasons"] = api->event_reasons != nullptr;
    }
    Resolve(h, "nvmlDeviceGetPowerManagementLimit", api->get_power, f);
    Resolve(h, "nvmlDeviceGetPowerManagementLimitConstraints", api->power_range, f);
    Resolve(h, "nvmlDeviceSetPowerManagementLimit", api->set_power, f);
    Resolve(h, "nvmlDeviceGetNvLinkState", api->link_state, f);
    Resolve(h, "nvmlDeviceGetNvLinkErrorCounter", api->link_errors, f);
    Resolve(h, "nvmlDeviceGetNvLinkRemotePciInfo_v2", api->link_remote_pci, f);
    Resolve(h, "nvmlDeviceGetName", api->name, f);
    Resolve(h, "nvmlDeviceGetUUID", api->uuid, f);
    Resolve(h, "nvmlDeviceGetPciInfo_v3", api->pci, f);
    Resolve(h, "nvmlDeviceGetFieldValues", api->field_values, f);
    handle_ = h;  // never dlclose'd: the driver library stays for the process
    api_ = std::move(api);
  }
  if (!api_->init || !api_->get_count || !api_->get_handle) {
    return Unsupported(library_ +
                       " is not an NVML library (no nvmlInit_v2 / nvmlDeviceGetCount_v2)");
  }
  if (auto s = Check(api_->init(), "nvmlInit_v2"); !s.ok()) return s;
  initialized_ = true;
  return Status::Ok();
}

bool Nvml::Has(const std::string& symbol) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!api_) return false;
  auto it = api_->found.find(symbol);
  return it != api_->found.end() && it->second;
}

Status Nvml::Check(nvmlReturn_t r, const char* call) const {
  if (r == NVML_SUCCESS) return Status::Ok();
  std::string text = api_ && api_->error_string ? api_->error_string(r) : "";
  std::string m = std::string(call) + ": " + (text.empty() ? "NVML error" : text) + " (" +
                  std::to_string(r) + ")";
  switch (r) {
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return Unsupported(m);
    case NVML_ERROR_INVALID_ARGUMENT:
      return InvalidArgument(m);
    case NVML_ERROR_NOT_FOUND:
    case NVML_ERROR_GPU_IS_LOST:
      return NotFound(m);
    case NVML_ERROR_NO_PERMISSION:  // not root
    case NVML_ERROR_IN_USE:         // e.g. bw mode while a CUDA P2P object exists
      return FailedPrecondition(m);
    default:
      return Internal(m);
  }
}

Result<unsigned> Nvml::DeviceCount() {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto s = LoadLocked(); !s.ok()) return s;
  unsigned n = 0;
  if (auto s = Check(api_->get_count(&n), "nvmlDeviceGetCount_v2"); !s.ok()) return s;
  return n;
}

Status Nvml::CheckGpu(unsigned gpu) {
  auto n = DeviceCount();
  if (!n.ok()) return n.status();
  if (gpu >= *n) {
    return NotFound("params.gpu: no GPU " + std::to_string(gpu) + " on this node; NVML counts " +
                    std::to_string(*n) + " GPU(s), numbered from 0");
  }
  return Status::Ok();
}

template <typename Fn>
Result<nvmlDevice_t> Nvml::Ready(Fn Api::*fn, const char* symbol, int gpu) {
  if (auto s = LoadLocked(); !s.ok()) return s;
  if (!(api_.get()->*fn)) return Missing(library_, symbol);
  nvmlDevice_t dev = nullptr;
  if (gpu == kNoGpu) return dev;
  if (auto s = Check(api_->get_handle(static_cast<unsigned>(gpu), &dev),
                     "nvmlDeviceGetHandleByIndex_v2");
      !s.ok()) {
    return s.Annotate("GPU " + std::to_string(gpu));
  }
  return dev;
}

Result<unsigned> Nvml::SystemNvlinkBwMode() {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto r = Ready(&Api::sys_get_bw, "nvmlSystemGetNvlinkBwMode", kNoGpu); !r.ok())
    return r.status();
  unsigned mode = 0;
  if (auto s = Check(api_->sys_get_bw(&mode), "nvmlSystemGetNvlinkBwMode"); !s.ok()) return s;
  return mode;
}

Status Nvml::SetSystemNvlinkBwMode(unsigned mode) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto r = Ready(&Api::sys_set_bw, "nvmlSystemSetNvlinkBwMode", kNoGpu); !r.ok())
    return r.status();
  return Check(api_->sys_set_bw(mode), "nvmlSystemSetNvlinkBwMode");
}

template <typename Fn, typename... Args>
Status Nvml::DeviceCall(Fn Api::*fn, const char* symbol, unsigned gpu, Args... args) {
  std::lock_guard<std::mutex> lock(mu_);
  auto dev = Ready(fn, symbol, static_cast<int>(gpu));
  if (!dev.ok()) return dev.status();
  return Check((api_.get()->*fn)(*dev, args...), symbol);
}

Result<Nvml::DeviceBwMode> Nvml::DeviceNvlinkBwMode(unsigned gpu) {
  nvmlNvlinkGetBwMode_v1_t get = {};
  get.version = nvmlNvlinkGetBwMode_v1;
  if (auto s = DeviceCall(&Api::dev_get_bw, "nvmlDeviceGetNvlinkBwMode", gpu, &get); !s.ok())
    return s;
  return DeviceBwMode{get.bwMode, get.bIsBest != 0};
}

Result<std::vector<unsigned>> Nvml::DeviceSupportedNvlinkBwModes(unsigned gpu) {
  nvmlNvlinkSupportedBwModes_v1_t sup = {};
  sup.version = nvmlNvlinkSupportedBwModes_v1;
  if (auto s = DeviceCall(&Api::dev_supported_bw, "nvmlDeviceGetNvlinkSupportedBwModes", gpu, &sup);
      !s.ok())
    return s;
  std::vector<unsigned> out;
  for (unsigned i = 0; i < sup.totalBwModes && i < NVML_NVLINK_TOTAL_SUPPORTED_BW_MODES; ++i) {
    out.push_back(sup.bwModes[i]);
  }
  return out;
}

Status Nvml::SetDeviceNvlinkBwMode(unsigned gpu, DeviceBwMode mode) {
  nvmlNvlinkSetBwMode_v1_t set = {};
  set.version = nvmlNvlinkSetBwMode_v1;
  set.bSetBest = mode.is_best ? 1 : 0;
  set.bwMode = static_cast<unsigned char>(mode.mode);
  return DeviceCall(&Api::dev_set_bw, "nvmlDeviceSetNvlinkBwMode", gpu, &set);
}

Status Nvml::SetGpuLockedClocks(unsigned gpu, unsigned min_mhz, unsigned max_mhz) {
  return DeviceCall(&Api::set_locked, "nvmlDeviceSetGpuLockedClocks", gpu, min_mhz, max_mhz);
}

Status Nvml::ResetGpuLockedClocks(unsigned gpu) {
  return DeviceCall(&Api::reset_locked, "nvmlDeviceResetGpuLockedClocks", gpu);
}

Result<unsigned> Nvml::ClockMhz(unsigned gpu, nvmlClockType_t type) {
  unsigned mhz = 0;
  if (auto s = DeviceCall(&Api::clock_info, "nvmlDeviceGetClockInfo", gpu, type, &mhz); !s.ok())
    return s;
  return mhz;
}

Result<unsigned> Nvml::MaxClockMhz(unsigned gpu, nvmlClockType_t type) {
  unsigned mhz = 0;
  if (auto s = DeviceCall(&Api::max_clock_info, "nvmlDeviceGetMaxClockInfo", gpu, type, &mhz);
      !s.ok())
    return s;
  return mhz;
}

Result<unsigned long long> Nvml::ClocksEventReasons(unsigned gpu) {
  unsigned long long bits = 0;
  if (auto s =
          DeviceCall(&Api::event_reasons, "nvmlDeviceGetCurrentClocksEventReasons", gpu, &bits);
      !s.ok())
    return s;
  return bits;
}

Result<unsigned> Nvml::PowerLimitMw(unsigned gpu) {
  unsigned mw = 0;
  if (auto s = DeviceCall(&Api::get_power, "nvmlDeviceGetPowerManagementLimit", gpu, &mw); !s.ok())
    return s;
  return mw;
}

Result<Nvml::PowerRange> Nvml::PowerLimitConstraintsMw(unsigned gpu) {
  PowerRange r;
  if (auto s = DeviceCall(&Api::power_range, "nvmlDeviceGetPowerManagementLimitConstraints", gpu,
                          &r.min_mw, &r.max_mw);
      !s.ok())
    return s;
  return r;
}

Status Nvml::SetPowerLimitMw(unsigned gpu, unsigned mw) {
  return DeviceCall(&Api::set_power, "nvmlDeviceSetPowerManagementLimit", gpu, mw);
}

Result<bool> Nvml::NvLinkActive(unsigned gpu, unsigned link) {
  nvmlEnableState_t state = NVML_FEATURE_DISABLED;
  if (auto s = DeviceCall(&Api::link_state, "nvmlDeviceGetNvLinkState", gpu, link, &state); !s.ok())
    return s;
  return state == NVML_FEATURE_ENABLED;
}

Result<unsigned long long> Nvml::NvLinkErrorCounter(unsigned gpu, unsigned link,
                                                    nvmlNvLinkErrorCounter_t counter) {
  unsigned long long n = 0;
  if (auto s =
          DeviceCall(&Api::link_errors, "nvmlDeviceGetNvLinkErrorCounter", gpu, link, counter, &n);
      !s.ok())
    return s;
  return n;
}

Result<std::string> Nvml::NvLinkRemotePciBusId(unsigned gpu, unsigned link) {
  nvmlPciInfo_t pci = {};
  if (auto s =
          DeviceCall(&Api::link_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2", gpu, link, &pci);
      !s.ok())
    return s;
  return CString(pci.busId, sizeof(pci.busId));
}

template <typename Fn>
Result<std::string> Nvml::DeviceText(Fn Api::*fn, const char* symbol, unsigned gpu, size_t size) {
  std::vector<char> buf(size, '\0');
  if (auto s = DeviceCall(fn, symbol, gpu, buf.data(), static_cast<unsigned>(size)); !s.ok())
    return s;
  return CString(buf.data(), size);
}

Result<std::string> Nvml::DeviceName(unsigned gpu) {
  return DeviceText(&Api::name, "nvmlDeviceGetName", gpu, NVML_DEVICE_NAME_V2_BUFFER_SIZE);
}

Result<std::string> Nvml::DeviceUuid(unsigned gpu) {
  return DeviceText(&Api::uuid, "nvmlDeviceGetUUID", gpu, NVML_DEVICE_UUID_V2_BUFFER_SIZE);
}

Result<std::string> Nvml::PciBusId(unsigned gpu) {
  nvmlPciInfo_t pci = {};
  if (auto s = DeviceCall(&Api::pci, "nvmlDeviceGetPciInfo_v3", gpu, &pci); !s.ok()) return s;
  return CString(pci.busId, sizeof(pci.busId));
}

Result<std::vector<Nvml::FieldValue>> Nvml::FieldValues(unsigned gpu,
                                                        const std::vector<FieldRequest>& fields) {
  std::lock_guard<std::mutex> lock(mu_);
  auto dev = Ready(&Api::field_values, "nvmlDeviceGetFieldValues", static_cast<int>(gpu));
  if (!dev.ok()) return dev.status();
  std::vector<nvmlFieldValue_t> values(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    values[i] = {};
    values[i].fieldId = fields[i].field;
    values[i].scopeId = fields[i].scope;
  }
  if (values.empty()) return std::vector<FieldValue>{};
  auto s = Check(api_->field_values(*dev, static_cast<int>(values.size()), values.data()),
                 "nvmlDeviceGetFieldValues");
  if (!s.ok()) return s;
  std::vector<FieldValue> out;
  out.reserve(values.size());
  for (const auto& v : values) {
    FieldValue f;
    f.status =
        Check(v.nvmlReturn, "nvmlDeviceGetFieldValues")
            .Annotate("field " + std::to_string(v.fieldId) + " scope " + std::to_string(v.scopeId));
    if (f.status.ok()) f.value = FieldAsUint64(v);
    out.push_back(std::move(f));
  }
  return out;
}

Nvml& NvmlAt(const std::string& library) {
  static std::mutex mu;
  static auto* all =
      new std::map<std::string, std::unique_ptr<Nvml>>();  // never freed, like the handles
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = (*all)[library];
  if (!slot) slot = std::make_unique<Nvml>(library);
  return *slot;
}

}  // namespace fdrill

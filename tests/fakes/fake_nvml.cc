// A fake libnvidia-ml: exports the NVML symbols fdrill resolves (the
// prototypes of common/host/nvml_api.h) backed by a state file, so tests can
// load it with dlopen exactly as the driver's library is loaded.
//
// State: the file named by $FAKE_NVML_STATE, one "key value" per line, read
// on every call and rewritten by every setter (tests set it up and read it
// back with tests/fakes/fake_nvml.h). Keys:
//   device_count N                   GPUs 0..N-1
//   bw_mode M                        system NVLink bandwidth mode
//   gpuI.bw_supported 0,2,3          per-device bw API present (Blackwell);
//   gpuI.bw_mode M, gpuI.bw_is_best  absent: NOT_SUPPORTED (Hopper)
//   gpuI.unlocked_sm_clock MHz       SM clock when not locked
//   gpuI.max_sm_clock MHz            nvmlDeviceGetMaxClockInfo(SM)
//   gpuI.locked_min/locked_max MHz   set by SetGpuLockedClocks (0: unlocked);
//                                    the SM clock reads clamped into them
//   gpuI.clock_reasons BITS          clocks event reasons
//   gpuI.power_mw/power_min_mw/power_max_mw
//   gpuI.linkL.state 0|1             link L exists; gpuI.linkL.errC counters
//                                    (absent counter: NOT_SUPPORTED)
//   gpuI.name / .uuid / .pci_bus_id  inventory strings (absent: NOT_SUPPORTED)
//   gpuI.linkL.remote_pci BUSID      what link L reaches
//   gpuI.linkL.fieldF N              field value F (138 DATA_TX KiB, ...) of
//                                    link L (absent: that entry NOT_SUPPORTED)
//   fail.SYMBOL CODE                 SYMBOL returns CODE and changes nothing
// Every call is appended to $FAKE_NVML_LOG as "symbol arg..." per line.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "common/host/nvml_api.h"

namespace {

using State = std::map<std::string, std::string>;

State Load() {
  State s;
  const char* path = std::getenv("FAKE_NVML_STATE");
  if (!path) return s;
  std::ifstream in(path);
  std::string key, value;
  while (in >> key && std::getline(in >> std::ws, value)) s[key] = value;
  return s;
}

void Store(const State& s) {
  const char* path = std::getenv("FAKE_NVML_STATE");
  if (!path) return;
  std::ofstream out(path, std::ios::trunc);
  for (const auto& [k, v] : s) out << k << ' ' << v << '\n';
}

void Log(const std::string& line) {
  const char* path = std::getenv("FAKE_NVML_LOG");
  if (!path) return;
  std::ofstream(path, std::ios::app) << line << '\n';
}

unsigned long long Num(const State& s, const std::string& key, unsigned long long def = 0) {
  auto it = s.find(key);
  return it == s.end() ? def : std::strtoull(it->second.c_str(), nullptr, 0);
}

// Logs the call and answers its fail.<symbol> code (0 when none).
nvmlReturn_t Enter(const State& s, const char* symbol, const std::string& args = "") {
  Log(std::string(symbol) + (args.empty() ? "" : " " + args));
  return static_cast<nvmlReturn_t>(Num(s, std::string("fail.") + symbol, NVML_SUCCESS));
}

// Handle i+1 for GPU i (never null); -1 for a bad handle.
long Gpu(const State& s, nvmlDevice_t dev) {
  auto i = static_cast<long>(reinterpret_cast<uintptr_t>(dev)) - 1;
  return i >= 0 && static_cast<unsigned long long>(i) < Num(s, "device_count") ? i : -1;
}
std::string Key(long gpu, const std::string& what) {
  return "gpu" + std::to_string(gpu) + "." + what;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2(void) { return Enter(Load(), "nvmlInit_v2"); }

const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_IN_USE:
      return "In use by another client";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* n) {
  State s = Load();
  if (auto r = Enter(s, "nvmlDeviceGetCount_v2")) return r;
  *n = static_cast<unsigned>(Num(s, "device_count"));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* dev) {
  State s = Load();
  if (auto r = Enter(s, "nvmlDeviceGetHandleByIndex_v2", std::to_string(index))) return r;
  if (index >= Num(s, "device_count")) return NVML_ERROR_INVALID_ARGUMENT;
  *dev = reinterpret_cast<nvmlDevice_t>(static_cast<uintptr_t>(index) + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetNvlinkBwMode(unsigned int* mode) {
  State s = Load();
  if (auto r = Enter(s, "nvmlSystemGetNvlinkBwMode")) return r;
  *mode = static_cast<unsigned>(Num(s, "bw_mode"));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemSetNvlinkBwMode(unsigned int mode) {
  State s = Load();
  if (auto r = Enter(s, "nvmlSystemSetNvlinkBwMode", std::to_string(mode))) return r;
  if (mode > NVML_NVLINK_BW_MODE_3QUARTER) return NVML_ERROR_INVALID_ARGUMENT;
  s["bw_mode"] = std::to_string(mode);
  Store(s);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvlinkSupportedBwModes(nvmlDevice_t dev,
                                                 nvmlNvlinkSupportedBwModes_v1_t* out) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, "nvmlDeviceGetNvlinkSupportedBwModes", std::to_string(g))) return r;
  if (g < 0 || out->version != nvmlNvlinkSupportedBwModes_v1) return NVML_ERROR_INVALID_ARGUMENT;
  if (!s.count(Key(g, "bw_supported"))) return NVML_ERROR_NOT_SUPPORTED;
  std::stringstream list(s[Key(g, "bw_supported")]);
  std::string item;
  out->totalBwModes = 0;
  while (std::getline(list, item, ',') &&
         out->totalBwModes < NVML_NVLINK_TOTAL_SUPPORTED_BW_MODES) {
    out->bwModes[out->totalBwModes++] = static_cast<unsigned char>(std::stoul(item));
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvlinkBwMode(nvmlDevice_t dev, nvmlNvlinkGetBwMode_v1_t* out) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, "nvmlDeviceGetNvlinkBwMode", std::to_string(g))) return r;
  if (g < 0 || out->version != nvmlNvlinkGetBwMode_v1) return NVML_ERROR_INVALID_ARGUMENT;
  if (!s.count(Key(g, "bw_supported"))) return NVML_ERROR_NOT_SUPPORTED;
  out->bwMode = static_cast<unsigned char>(Num(s, Key(g, "bw_mode")));
  out->bIsBest = static_cast<unsigned>(Num(s, Key(g, "bw_is_best")));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetNvlinkBwMode(nvmlDevice_t dev, nvmlNvlinkSetBwMode_v1_t* in) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, "nvmlDeviceSetNvlinkBwMode",
                     std::to_string(g) + " " + std::to_string(in->bwMode) +
                         " best=" + std::to_string(in->bSetBest))) {
    return r;
  }
  if (g < 0 || in->version != nvmlNvlinkSetBwMode_v1) return NVML_ERROR_INVALID_ARGUMENT;
  if (!s.count(Key(g, "bw_supported"))) return NVML_ERROR_NOT_SUPPORTED;
  s[Key(g, "bw_mode")] = std::to_string(in->bwMode);
  s[Key(g, "bw_is_best")] = in->bSetBest ? "1" : "0";
  Store(s);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t dev, unsigned int min_mhz,
                                          unsigned int max_mhz) {
  State s = Load();
  long g = Gpu(s, dev);
  std::string args =
      std::to_string(g) + " " + std::to_string(min_mhz) + " " + std::to_string(max_mhz);
  if (auto r = Enter(s, "nvmlDeviceSetGpuLockedClocks", args)) return r;
  if (g < 0 || min_mhz > max_mhz) return NVML_ERROR_INVALID_ARGUMENT;
  s[Key(g, "locked_min")] = std::to_string(min_mhz);
  s[Key(g, "locked_max")] = std::to_string(max_mhz);
  Store(s);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t dev) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, "nvmlDeviceResetGpuLockedClocks", std::to_string(g))) return r;
  if (g < 0) return NVML_ERROR_INVALID_ARGUMENT;
  s[Key(g, "locked_min")] = "0";
  s[Key(g, "locked_max")] = "0";
  Store(s);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t dev, nvmlClockType_t type, unsigned int* mhz) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, "nvmlDeviceGetClockInfo", std::to_string(g) + " " + std::to_string(type)))
    return r;
  if (g < 0 || (type != NVML_CLOCK_SM && type != NVML_CLOCK_GRAPHICS))
    return NVML_ERROR_INVALID_ARGUMENT;
  auto clock = Num(s, Key(g, "unlocked_sm_clock"));
  auto lo = Num(s, Key(g, "locked_min")), hi = Num(s, Key(g, "locked_max"));
  if (hi != 0) clock = clock < lo ? lo : (clock > hi ? hi : clock);
  *mhz = static_cast<unsigned>(clock);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, nvmlClockType_t type, unsigned int* mhz) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r =
          Enter(s, "nvmlDeviceGetMaxClockInfo", std::to_string(g) + " " + std::to_string(type)))
    return r;
  if (g < 0 || (type != NVML_CLOCK_SM && type != NVML_CLOCK_GRAPHICS))
    return NVML_ERROR_INVALID_ARGUMENT;
  *mhz = static_cast<unsigned>(Num(s, Key(g, "max_sm_clock")));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t dev, unsigned long long* bits) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, "nvmlDeviceGetCurrentClocksEventReasons", std::to_string(g))) return r;
  if (g < 0) return NVML_ERROR_INVALID_ARGUMENT;
  *bits = Num(s, Key(g, "clock_reasons"));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t dev, unsigned int* mw) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, "nvmlDeviceGetPowerManagementLimit", std::to_string(g))) return r;
  if (g < 0) return NVML_ERROR_INVALID_ARGUMENT;
  *mw = static_cast<unsigned>(Num(s, Key(g, "power_mw")));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t dev, unsigned int* lo,
                                                          unsigned int* hi) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, "nvmlDeviceGetPowerManagementLimitConstraints", std::to_string(g)))
    return r;
  if (g < 0) return NVML_ERROR_INVALID_ARGUMENT;
  *lo = static_cast<unsigned>(Num(s, Key(g, "power_min_mw")));
  *hi = static_cast<unsigned>(Num(s, Key(g, "power_max_mw")));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t dev, unsigned int mw) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, "nvmlDeviceSetPowerManagementLimit",
                     std::to_string(g) + " " + std::to_string(mw)))
    return r;
  if (g < 0 || mw < Num(s, Key(g, "power_min_mw")) || mw > Num(s, Key(g, "power_max_mw"))) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  s[Key(g, "power_mw")] = std::to_string(mw);
  Store(s);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t dev, unsigned int link,
                                      nvmlEnableState_t* active) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, "nvmlDeviceGetNvLinkState", std::to_string(g) + " " + std::to_string(link)))
    return r;
  std::string key = Key(g, "link" + std::to_string(link) + ".state");
  if (g < 0 || link >= NVML_NVLINK_MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  if (!s.count(key)) return NVML_ERROR_NOT_SUPPORTED;
  *active = Num(s, key) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t dev, unsigned int link,
                                             nvmlNvLinkErrorCounter_t counter,
                                             unsigned long long* value) {
  State s = Load();
  long g = Gpu(s, dev);
  std::string args = std::to_string(g) + " " + std::to_string(link) + " " + std::to_string(counter);
  if (auto r = Enter(s, "nvmlDeviceGetNvLinkErrorCounter", args)) return r;
  std::string key = Key(g, "link" + std::to_string(link) + ".err" + std::to_string(counter));
  if (g < 0 || link >= NVML_NVLINK_MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  if (!s.count(key)) return NVML_ERROR_NOT_SUPPORTED;
  *value = Num(s, key);
  return NVML_SUCCESS;
}

// Copies `text` into NVML's fixed buffer as the driver does: INSUFFICIENT_SIZE
// when it and its NUL do not fit.
static nvmlReturn_t CopyOut(const std::string& text, char* buf, unsigned int length) {
  if (text.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  text.copy(buf, text.size());
  buf[text.size()] = '\0';
  return NVML_SUCCESS;
}

static nvmlReturn_t StringOf(const char* symbol, nvmlDevice_t dev, const std::string& what,
                             char* buf, unsigned int length) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, symbol, std::to_string(g))) return r;
  if (g < 0 || buf == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto it = s.find(Key(g, what));
  if (it == s.end()) return NVML_ERROR_NOT_SUPPORTED;
  return CopyOut(it->second, buf, length);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char* name, unsigned int length) {
  return StringOf("nvmlDeviceGetName", dev, "name", name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char* uuid, unsigned int length) {
  return StringOf("nvmlDeviceGetUUID", dev, "uuid", uuid, length);
}

// Fills busId (and busIdLegacy, domain, bus, device) from "DDDDDDDD:BB:DD.F".
static void FillPci(const std::string& bus_id, nvmlPciInfo_t* pci) {
  *pci = {};
  CopyOut(bus_id.substr(0, sizeof(pci->busId) - 1), pci->busId, sizeof(pci->busId));
  std::string legacy = bus_id.size() > 8 ? bus_id.substr(4) : bus_id;  // 4-digit domain
  CopyOut(legacy.substr(0, sizeof(pci->busIdLegacy) - 1), pci->busIdLegacy,
          sizeof(pci->busIdLegacy));
  unsigned domain = 0, bus = 0, device = 0;
  if (std::sscanf(bus_id.c_str(), "%x:%x:%x", &domain, &bus, &device) == 3) {
    pci->domain = domain;
    pci->bus = bus;
    pci->device = device;
  }
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t* pci) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, "nvmlDeviceGetPciInfo_v3", std::to_string(g))) return r;
  if (g < 0 || pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto it = s.find(Key(g, "pci_bus_id"));
  if (it == s.end()) return NVML_ERROR_NOT_SUPPORTED;
  FillPci(it->second, pci);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t dev, unsigned int link,
                                                 nvmlPciInfo_t* pci) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r = Enter(s, "nvmlDeviceGetNvLinkRemotePciInfo_v2",
                     std::to_string(g) + " " + std::to_string(link))) {
    return r;
  }
  if (g < 0 || link >= NVML_NVLINK_MAX_LINKS || pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  auto it = s.find(Key(g, "link" + std::to_string(link) + ".remote_pci"));
  if (it == s.end()) return NVML_ERROR_NOT_SUPPORTED;
  FillPci(it->second, pci);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t dev, int count, nvmlFieldValue_t* values) {
  State s = Load();
  long g = Gpu(s, dev);
  if (auto r =
          Enter(s, "nvmlDeviceGetFieldValues", std::to_string(g) + " " + std::to_string(count)))
    return r;
  if (g < 0 || count < 0 || (count > 0 && values == nullptr)) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& v = values[i];
    auto it =
        s.find(Key(g, "link" + std::to_string(v.scopeId) + ".field" + std::to_string(v.fieldId)));
    v.timestamp = 0;
    v.latencyUsec = 0;
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    v.nvmlReturn = it == s.end() ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
    v.value.ullVal = it == s.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 0);
  }
  return NVML_SUCCESS;
}

}  // extern "C"

#include "injectors/nvml.h"

namespace fdrill {

namespace {

// The Gpus of a host without NVML: nothing to load, every call Unsupported.
class NoGpus final : public Gpus {
 public:
  const std::string& library() const override { return name_; }
  Status Load() override { return None(); }
  bool Has(const std::string&) override { return false; }
  Result<unsigned> DeviceCount() override { return None(); }
  Status CheckGpu(unsigned) override { return None(); }
  Result<unsigned> SystemNvlinkBwMode() override { return None(); }
  Status SetSystemNvlinkBwMode(unsigned) override { return None(); }
  Result<DeviceBwMode> DeviceNvlinkBwMode(unsigned) override { return None(); }
  Result<std::vector<unsigned>> DeviceSupportedNvlinkBwModes(unsigned) override { return None(); }
  Status SetDeviceNvlinkBwMode(unsigned, DeviceBwMode) override { return None(); }
  Status SetGpuLockedClocks(unsigned, unsigned, unsigned) override { return None(); }
  Status ResetGpuLockedClocks(unsigned) override { return None(); }
  Result<unsigned> ClockMhz(unsigned, nvmlClockType_t) override { return None(); }
  Result<unsigned> MaxClockMhz(unsigned, nvmlClockType_t) override { return None(); }
  Result<unsigned long long> ClocksEventReasons(unsigned) override { return None(); }
  Result<unsigned> PowerLimitMw(unsigned) override { return None(); }
  Result<PowerRange> PowerLimitConstraintsMw(unsigned) override { return None(); }
  Status SetPowerLimitMw(unsigned, unsigned) override { return None(); }
  Result<bool> NvLinkActive(unsigned, unsigned) override { return None(); }
  Result<unsigned long long> NvLinkErrorCounter(unsigned, unsigned,
                                                nvmlNvLinkErrorCounter_t) override {
    return None();
  }
  Result<std::string> NvLinkRemotePciBusId(unsigned, unsigned) override { return None(); }
  Result<std::string> DeviceName(unsigned) override { return None(); }
  Result<std::string> DeviceUuid(unsigned) override { return None(); }
  Result<std::string> PciBusId(unsigned) override { return None(); }
  Result<std::vector<FieldValue>> FieldValues(unsigned, const std::vector<FieldRequest>&) override {
    return None();
  }

 private:
  static Status None() { return Unsupported("no NVML on this host (the agent runs without GPUs)"); }
  const std::string name_ = "no NVML";
};

}  // namespace

Gpus& GpusOf(const Host& host) {
  static NoGpus* none = new NoGpus();  // stateless; never freed, like NvmlAt's
  return host.gpus != nullptr ? *host.gpus : *none;
}

Result<unsigned> ReadRequiredUint(ParamReader& p, const Json& params, const std::string& key,
                                  unsigned min, unsigned max, const std::string& what) {
  auto n = p.Int(key, 0, min, max);
  if (!n.ok()) return n.status();
  if (!params.is_object() || !params.contains(key)) {
    return InvalidArgument("params." + key + ": required (" + what + ")");
  }
  return static_cast<unsigned>(*n);
}

Result<unsigned> ReadGpuIndex(ParamReader& p, const Json& params) {
  return ReadRequiredUint(p, params, "gpu", 0, kMaxGpuIndex,
                          "a GPU index as NVML and nvidia-smi number them");
}

Status ProbeNvml(const Json& params, const Host& host, const std::vector<std::string>& symbols) {
  Gpus& nvml = GpusOf(host);
  if (auto s = nvml.Load(); !s.ok()) return s;
  for (const auto& sym : symbols) {
    if (!nvml.Has(sym)) {
      return Unsupported(nvml.library() + " has no " + sym +
                         " (driver too old for this mechanism)");
    }
  }
  if (params.is_object() && params.contains("gpu")) {
    const Json& g = params["gpu"];
    if (!g.is_number_integer() || g.get<int64_t>() < 0)
      return InvalidArgument("params.gpu: must be a GPU index");
    return nvml.CheckGpu(static_cast<unsigned>(g.get<int64_t>()));
  }
  return Status::Ok();
}

}  // namespace fdrill

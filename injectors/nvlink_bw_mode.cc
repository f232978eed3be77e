// nvlink_bw_mode: lowers NVLink bandwidth (or turns NVLink off) through NVML.
//
// Without params.gpu it sets the system-wide mode (nvmlSystemSetNvlinkBwMode,
// Hopper and later: every GPU of the node). With params.gpu it uses the
// per-device API of Blackwell and later (nvmlDeviceSetNvlinkBwMode) and
// fails as Unsupported where that API is missing or answers NOT_SUPPORTED:
// it never widens a one-GPU fault into a system-wide one. Modes: FULL 0,
// OFF 1, MIN 2, HALF 3, 3QUARTER 4 (DCGM's dcgm_nvml.py). The per-device
// API lists the modes a GPU accepts (nvmlDeviceGetNvlinkSupportedBwModes);
// we check the requested number against that list and take the per-device
// numbering to be the system one, which no header states and no Blackwell
// machine of ours has confirmed.
//
// Capture reads the current mode (and, per device, whether the driver chose
// it as "best"). Verify reads the mode back from NVML. Revert sets the saved
// mode only while NVML reports a different one, so it touches nothing after
// a failed Apply and nothing the second time. The driver refuses a change
// with IN_USE while any CUDA P2P object exists (set it before the job's
// ranks start), and NO_PERMISSION unless root. The mode outlives the harness
// (until reset or driver reload), which is why Revert must run.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "common/core/did_you_mean.h"
#include "injectors/injector.h"
#include "injectors/nvml.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

const std::map<std::string, unsigned> kModes = {{"full", NVML_NVLINK_BW_MODE_FULL},
                                                {"off", NVML_NVLINK_BW_MODE_OFF},
                                                {"min", NVML_NVLINK_BW_MODE_MIN},
                                                {"half", NVML_NVLINK_BW_MODE_HALF},
                                                {"3quarter", NVML_NVLINK_BW_MODE_3QUARTER}};

std::string ModeName(unsigned mode) {
  for (const auto& [name, value] : kModes) {
    if (value == mode) return name + " (" + std::to_string(mode) + ")";
  }
  return "mode " + std::to_string(mode);
}

class NvlinkBwMode final : public Fault {
 public:
  NvlinkBwMode(Gpus& nvml, std::optional<unsigned> gpu, unsigned mode)
      : nvml_(nvml), gpu_(gpu), mode_(mode) {}

  Status Capture() override {
    if (gpu_) {
      if (auto s = nvml_.CheckGpu(*gpu_); !s.ok()) return s.Annotate(Name());
      auto supported = nvml_.DeviceSupportedNvlinkBwModes(*gpu_);
      if (!supported.ok()) return supported.status().Annotate(Name());
      if (std::find(supported->begin(), supported->end(), mode_) == supported->end()) {
        std::string list;
        for (unsigned m : *supported) list += (list.empty() ? "" : ", ") + ModeName(m);
        return InvalidArgument("params.mode: GPU " + std::to_string(*gpu_) + " does not accept " +
                               ModeName(mode_) + "; NVML lists: " + (list.empty() ? "none" : list));
      }
    }
    auto now = Read();
    if (!now.ok()) return now.status().Annotate(Name());
    prior_ = *now;
    captured_ = true;
    return Status::Ok();
  }

  Json Saved() const override {
    if (!captured_) return Json::object();
    return {{"prior_mode", prior_.mode}, {"prior_is_best", prior_.is_best}};
  }
  Status Load(const Json& saved) override {
    captured_ = saved.contains("prior_mode");
    prior_.mode = saved.value("prior_mode", 0u);
    prior_.is_best = saved.value("prior_is_best", false);
    return Status::Ok();
  }

  Status Apply() override { return Write({mode_, false}).Annotate(Name()); }

  Status Verify() override {
    auto now = Read();
    if (!now.ok()) return now.status().Annotate(Name());
    if (now->mode != mode_) {
      return FailedPrecondition(Name() + ": NVML reports " + ModeName(now->mode) + ", expected " +
                                ModeName(mode_));
    }
    return Status::Ok();
  }

  Status Revert() override {
    if (!captured_) return Status::Ok();  // Capture precedes Apply: nothing was changed
    auto now = Read();
    if (!now.ok()) return now.status().Annotate(Name());
    if (now->mode == prior_.mode) return Status::Ok();  // never applied, or already reverted
    return Write(prior_).Annotate(Name());
  }

  Status VerifyReverted() override {
    auto now = Read();
    if (!now.ok()) return now.status().Annotate(Name());
    if (captured_ && now->mode != prior_.mode) {
      return FailedPrecondition(Name() + ": NVML reports " + ModeName(now->mode) +
                                ", expected the prior " + ModeName(prior_.mode));
    }
    return Status::Ok();
  }

  std::string Target() const override { return gpu_ ? "gpu" + std::to_string(*gpu_) : "nvlink"; }
  std::vector<std::string> Mechanism() const override {
    std::string call = gpu_ ? "nvmlDeviceSetNvlinkBwMode(gpu " + std::to_string(*gpu_) + ", "
                            : "nvmlSystemSetNvlinkBwMode(";
    return {"apply: " + call + ModeName(mode_) + ")",
            "revert: " + call + "the mode read before apply)"};
  }

 private:
  std::string Name() const { return "nvlink_bw_mode " + Target(); }

  Result<Gpus::DeviceBwMode> Read() {
    if (gpu_) return nvml_.DeviceNvlinkBwMode(*gpu_);
    auto mode = nvml_.SystemNvlinkBwMode();
    if (!mode.ok()) return mode.status();
    return Gpus::DeviceBwMode{*mode, false};
  }
  Status Write(Gpus::DeviceBwMode mode) {
    if (gpu_) return nvml_.SetDeviceNvlinkBwMode(*gpu_, mode);
    return nvml_.SetSystemNvlinkBwMode(mode.mode);
  }

  Gpus& nvml_;
  std::optional<unsigned> gpu_;
  unsigned mode_;
  bool captured_ = false;
  Gpus::DeviceBwMode prior_;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeNvlinkBwMode(const Json& params, Host host) {
  ParamReader p(params);
  auto name = p.String("mode");
  if (!name.ok()) return name.status();
  auto mode = kModes.find(*name);
  if (mode == kModes.end()) {
    std::set<std::string> names;
    for (const auto& [n, _] : kModes) names.insert(n);
    std::string hint = DidYouMean(*name, names);
    return InvalidArgument("params.mode: \"" + *name +
                           "\" is not one of full, off, min, half, 3quarter" +
                           (hint.empty() ? "" : "; " + hint));
  }
  auto g = p.Int("gpu", -1, 0, kMaxGpuIndex);  // optional: -1 is "absent", never a valid value
  if (!g.ok()) return g.status();
  std::optional<unsigned> gpu;
  if (*g >= 0) gpu = static_cast<unsigned>(*g);
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<NvlinkBwMode>(GpusOf(host), gpu, mode->second));
}

Status ProbeNvlinkBwMode(const Json& params, Host host) {
  bool per_gpu = params.is_object() && params.contains("gpu");
  auto s =
      per_gpu ? ProbeNvml(params, host,
                          {"nvmlDeviceGetNvlinkSupportedBwModes", "nvmlDeviceGetNvlinkBwMode",
                           "nvmlDeviceSetNvlinkBwMode"})
              : ProbeNvml(params, host, {"nvmlSystemGetNvlinkBwMode", "nvmlSystemSetNvlinkBwMode"});
  if (!s.ok()) return s;
  // A read is harmless and is what tells Hopper+ from older GPUs (NOT_SUPPORTED).
  Gpus& nvml = GpusOf(host);
  if (per_gpu) return nvml.DeviceNvlinkBwMode(params["gpu"].get<unsigned>()).status();
  return nvml.SystemNvlinkBwMode().status();
}

}  // namespace fdrill

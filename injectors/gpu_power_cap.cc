// gpu_power_cap: lowers one GPU's power management limit with
// nvmlDeviceSetPowerManagementLimit (milliwatts; `nvidia-smi -i N -pl W`;
// root), so the driver throttles clocks to stay under it.
//
// Capture reads the current limit (nvmlDeviceGetPowerManagementLimit) and
// the range the driver accepts (nvmlDeviceGetPowerManagementLimitConstraints);
// a watts outside that range is rejected before anything changes. Verify
// reads the management limit back from NVML. (The *enforced* limit,
// nvmlDeviceGetEnforcedPowerLimit, can be lower still when another limit
// binds; this fault sets and checks only the management limit.) Revert sets
// the captured limit, not the default, and only while NVML reports another
// value: safe after a failed Apply and twice. The limit outlives the harness
// while persistence mode is on, so Revert must run.
#include "injectors/injector.h"
#include "injectors/nvml.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

// 250000 -> "250 W", 212500 -> "212.500 W".
std::string Watts(unsigned mw) {
  std::string w = std::to_string(mw / 1000);
  if (mw % 1000 != 0) {
    std::string frac = std::to_string(mw % 1000);
    w += "." + std::string(3 - frac.size(), '0') + frac;
  }
  return w + " W";
}

class GpuPowerCap final : public Fault {
 public:
  GpuPowerCap(Gpus& nvml, unsigned gpu, unsigned watts)
      : nvml_(nvml), gpu_(gpu), target_mw_(watts * 1000u) {}

  Status Capture() override {
    if (auto s = nvml_.CheckGpu(gpu_); !s.ok()) return s.Annotate(Name());
    auto range = nvml_.PowerLimitConstraintsMw(gpu_);
    if (!range.ok()) return range.status().Annotate(Name());
    if (target_mw_ < range->min_mw || target_mw_ > range->max_mw) {
      return InvalidArgument("params.watts: " + Watts(target_mw_) + " is outside GPU " +
                             std::to_string(gpu_) + "'s allowed range " + Watts(range->min_mw) +
                             " to " + Watts(range->max_mw) +
                             " (nvmlDeviceGetPowerManagementLimitConstraints)");
    }
    auto now = nvml_.PowerLimitMw(gpu_);
    if (!now.ok()) return now.status().Annotate(Name());
    prior_mw_ = *now;
    captured_ = true;
    return Status::Ok();
  }

  Json Saved() const override {
    if (!captured_) return Json::object();
    return {{"prior_mw", prior_mw_}};
  }
  Status Load(const Json& saved) override {
    captured_ = saved.contains("prior_mw");
    prior_mw_ = saved.value("prior_mw", 0u);
    return Status::Ok();
  }

  Status Apply() override { return nvml_.SetPowerLimitMw(gpu_, target_mw_).Annotate(Name()); }

  Status Verify() override { return Expect(target_mw_, "the cap"); }

  Status Revert() override {
    if (!captured_) return Status::Ok();  // Capture precedes Apply: nothing was changed
    auto now = nvml_.PowerLimitMw(gpu_);
    if (!now.ok()) return now.status().Annotate(Name());
    if (*now == prior_mw_) return Status::Ok();  // never applied, or already reverted
    return nvml_.SetPowerLimitMw(gpu_, prior_mw_).Annotate(Name());
  }

  Status VerifyReverted() override {
    if (!captured_) return Status::Ok();
    return Expect(prior_mw_, "the prior limit");
  }

  std::string Target() const override { return "gpu" + std::to_string(gpu_); }
  std::vector<std::string> Mechanism() const override {
    std::string dev = "gpu " + std::to_string(gpu_);
    return {"apply: nvmlDeviceSetPowerManagementLimit(" + dev + ", " + std::to_string(target_mw_) +
                " mW)",
            "revert: nvmlDeviceSetPowerManagementLimit(" + dev + ", the limit read before apply)"};
  }

 private:
  std::string Name() const { return "gpu_power_cap " + Target(); }

  Status Expect(unsigned want_mw, const std::string& what) {
    auto now = nvml_.PowerLimitMw(gpu_);
    if (!now.ok()) return now.status().Annotate(Name());
    if (*now != want_mw) {
      return FailedPrecondition(Name() + ": NVML reports a power limit of " + Watts(*now) +
                                ", expected " + what + " " + Watts(want_mw));
    }
    return Status::Ok();
  }

  Gpus& nvml_;
  unsigned gpu_;
  unsigned target_mw_;
  bool captured_ = false;
  unsigned prior_mw_ = 0;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeGpuPowerCap(const Json& params, Host host) {
  ParamReader p(params);
  auto gpu = ReadGpuIndex(p, params);
  if (!gpu.ok()) return gpu.status();
  // The GPU's own range is checked in Capture; this only bounds the number.
  auto watts = ReadRequiredUint(p, params, "watts", 1, 100000, "the power limit in watts");
  if (!watts.ok()) return watts.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<GpuPowerCap>(GpusOf(host), *gpu, *watts));
}

Status ProbeGpuPowerCap(const Json& params, Host host) {
  return ProbeNvml(
      params, host,
      {"nvmlDeviceGetPowerManagementLimit", "nvmlDeviceGetPowerManagementLimitConstraints",
       "nvmlDeviceSetPowerManagementLimit"});
}

}  // namespace fdrill

// gpu_clock_lock: pins one GPU's graphics/SM clock into [min_mhz, max_mhz]
// with nvmlDeviceSetGpuLockedClocks (`nvidia-smi -lgc min,max`; Volta and
// later, root), making that rank slow. Revert is
// nvmlDeviceResetGpuLockedClocks (`nvidia-smi -rgc`).
//
// What NVML can and cannot show:
//  - There is no getter for locked clocks. Capture cannot read a lock set
//    before it, and Revert resets to "unlocked", not to such a lock; Saved()
//    says so. Capture reads the GPU's maximum SM clock
//    (nvmlDeviceGetMaxClockInfo, which a lock does not change) only to
//    reject a max_mhz the GPU cannot reach.
//  - Verify reads the current SM clock (nvmlDeviceGetClockInfo, NVML_CLOCK_SM).
//    Above max_mhz proves the lock is not in force. Below min_mhz is accepted
//    only while nvmlDeviceGetCurrentClocksEventReasons reports idle, a power
//    cap or a thermal/power-brake slowdown, which the driver lets pull clocks
//    under a lock. Inside the window is consistent with the lock but does not
//    prove it: an unlocked GPU may run there by itself.
//  - VerifyReverted can only see that the reset was acknowledged and that the
//    GPU still answers; an unlocked GPU looks like any other.
// The lock survives the harness while persistence mode is on (and vanishes
// with the driver when it is off), so Revert must run. Revert resets only
// when Apply's set call succeeded in this process, or when the Fault was
// rebuilt from the journal (Apply may have run before a crash); resetting
// is harmless when no lock is set.
#include "injectors/injector.h"
#include "injectors/nvml.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

constexpr unsigned long long kSlowdownReasons =
    NVML_CLOCKS_EVENT_REASON_GPU_IDLE | NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP |
    NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN | NVML_CLOCKS_EVENT_REASON_SW_THERMAL_SLOWDOWN |
    NVML_CLOCKS_EVENT_REASON_HW_THERMAL_SLOWDOWN | NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN;

class GpuClockLock final : public Fault {
 public:
  GpuClockLock(Gpus& nvml, unsigned gpu, unsigned min_mhz, unsigned max_mhz)
      : nvml_(nvml), gpu_(gpu), min_mhz_(min_mhz), max_mhz_(max_mhz) {}

  Status Capture() override {
    if (auto s = nvml_.CheckGpu(gpu_); !s.ok()) return s.Annotate(Name());
    auto top = nvml_.MaxClockMhz(gpu_, NVML_CLOCK_SM);
    if (!top.ok()) return top.status().Annotate(Name());
    if (max_mhz_ > *top) {
      return InvalidArgument("params.max_mhz: " + std::to_string(max_mhz_) + " MHz is above GPU " +
                             std::to_string(gpu_) + "'s maximum SM clock of " +
                             std::to_string(*top) + " MHz");
    }
    max_sm_clock_mhz_ = *top;
    return Status::Ok();
  }

  Json Saved() const override {
    return {{"max_sm_clock_mhz", max_sm_clock_mhz_},
            {"prior_lock", "unknown: NVML cannot read locked clocks; revert resets to unlocked"}};
  }
  Status Load(const Json& saved) override {
    max_sm_clock_mhz_ = saved.value("max_sm_clock_mhz", 0u);
    may_be_locked_ = true;  // the journal is written before Apply: it may have run
    return Status::Ok();
  }

  Status Apply() override {
    auto s = nvml_.SetGpuLockedClocks(gpu_, min_mhz_, max_mhz_);
    if (s.ok()) may_be_locked_ = true;
    return s.Annotate(Name());
  }

  Status Verify() override {
    auto sm = nvml_.ClockMhz(gpu_, NVML_CLOCK_SM);
    if (!sm.ok()) return sm.status().Annotate(Name());
    if (*sm > max_mhz_) {
      return FailedPrecondition(Name() + ": SM clock is " + std::to_string(*sm) +
                                " MHz, above the lock's " + std::to_string(max_mhz_) + " MHz");
    }
    if (*sm < min_mhz_) {
      auto reasons = nvml_.ClocksEventReasons(gpu_);
      if (!reasons.ok()) return reasons.status().Annotate(Name());
      if ((*reasons & kSlowdownReasons) == 0) {
        return FailedPrecondition(Name() + ": SM clock is " + std::to_string(*sm) +
                                  " MHz, below the lock's " + std::to_string(min_mhz_) +
                                  " MHz with no idle, power or thermal reason reported");
      }
    }
    return Status::Ok();
  }

  Status Revert() override {
    if (!may_be_locked_) return Status::Ok();  // Apply never succeeded: nothing to reset
    if (auto s = nvml_.ResetGpuLockedClocks(gpu_); !s.ok()) return s.Annotate(Name());
    may_be_locked_ = false;
    return Status::Ok();
  }

  Status VerifyReverted() override {
    if (may_be_locked_) return FailedPrecondition(Name() + ": locked clocks not reset yet");
    auto sm = nvml_.ClockMhz(gpu_, NVML_CLOCK_SM);
    return sm.ok() ? Status::Ok() : sm.status().Annotate(Name());
  }

  std::string Target() const override { return "gpu" + std::to_string(gpu_); }
  std::vector<std::string> Mechanism() const override {
    std::string dev = "gpu " + std::to_string(gpu_);
    return {"apply: nvmlDeviceSetGpuLockedClocks(" + dev + ", " + std::to_string(min_mhz_) +
                " MHz, " + std::to_string(max_mhz_) + " MHz)",
            "revert: nvmlDeviceResetGpuLockedClocks(" + dev + ")"};
  }

 private:
  std::string Name() const { return "gpu_clock_lock " + Target(); }

  Gpus& nvml_;
  unsigned gpu_;
  unsigned min_mhz_;
  unsigned max_mhz_;
  unsigned max_sm_clock_mhz_ = 0;
  bool may_be_locked_ = false;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeGpuClockLock(const Json& params, Host host) {
  ParamReader p(params);
  auto gpu = ReadGpuIndex(p, params);
  if (!gpu.ok()) return gpu.status();
  // Numeric MHz only: NVML's symbolic limits (0xffffff01 TDP, 0xffffff02
  // unlimited) cannot be mixed with numbers and are not offered.
  auto min_mhz = ReadRequiredUint(p, params, "min_mhz", 1, 100000, "the lowest SM clock in MHz");
  if (!min_mhz.ok()) return min_mhz.status();
  auto max_mhz = ReadRequiredUint(p, params, "max_mhz", 1, 100000, "the highest SM clock in MHz");
  if (!max_mhz.ok()) return max_mhz.status();
  if (*min_mhz > *max_mhz) {
    return InvalidArgument("params.min_mhz: " + std::to_string(*min_mhz) +
                           " is above params.max_mhz " + std::to_string(*max_mhz));
  }
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(
      std::make_unique<GpuClockLock>(GpusOf(host), *gpu, *min_mhz, *max_mhz));
}

Status ProbeGpuClockLock(const Json& params, Host host) {
  return ProbeNvml(params, host,
                   {"nvmlDeviceSetGpuLockedClocks", "nvmlDeviceResetGpuLockedClocks",
                    "nvmlDeviceGetClockInfo", "nvmlDeviceGetMaxClockInfo"});
}

}  // namespace fdrill

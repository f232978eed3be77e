#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_nvml.h"

namespace fdrill {
namespace {

using Lines = std::vector<std::string>;

const Json kLock = {{"gpu", 0}, {"min_mhz", 1000}, {"max_mhz", 1200}};

std::unique_ptr<Fault> Make(Json params) {
  auto f = MakeFault("gpu_clock_lock", params, FakeNvmlHost());
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(*f) : nullptr;
}

TEST(GpuClockLock, ApplyVerifyRevertVerify) {
  FakeNvml nvml;
  nvml.Node(1);
  auto f = Make(kLock);
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_NE(f->Saved()["prior_lock"].get<std::string>().find("unknown"), std::string::npos);
  EXPECT_FALSE(f->Verify().ok());  // 1980 MHz: not locked yet
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok());
  EXPECT_EQ(nvml.Get("gpu0.locked_max"), "1200");
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(nvml.Get("gpu0.locked_max"), "0");
  EXPECT_FALSE(f->Verify().ok());
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlDeviceSetGpuLockedClocks 0 1000 1200",
                                     "nvmlDeviceResetGpuLockedClocks 0"}));
  EXPECT_EQ(f->Target(), "gpu0");
}

TEST(GpuClockLock, RevertAfterFailedApplyTouchesNothing) {
  FakeNvml nvml;
  nvml.Node(1);
  nvml.Set("fail.nvmlDeviceSetGpuLockedClocks", "4");  // NO_PERMISSION: not root
  auto f = Make(kLock);
  ASSERT_TRUE(f->Capture().ok());
  Status s = f->Apply();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Insufficient Permissions"), std::string::npos) << s.message();
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlDeviceSetGpuLockedClocks 0 1000 1200"}));
}

TEST(GpuClockLock, RevertTwiceResetsOnce) {
  FakeNvml nvml;
  nvml.Node(1);
  auto f = Make(kLock);
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Revert().ok());  // before Apply: nothing to reset
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlDeviceSetGpuLockedClocks 0 1000 1200",
                                     "nvmlDeviceResetGpuLockedClocks 0"}));
}

TEST(GpuClockLock, BelowTheWindowCountsOnlyWithAnIdleOrPowerReason) {
  FakeNvml nvml;
  nvml.Node(1);
  nvml.Set("gpu0.unlocked_sm_clock", "345");
  auto f = Make(kLock);
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  nvml.Set("gpu0.locked_min", "0");  // the driver lets the clock fall under the lock
  Status s = f->Verify();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("345 MHz, below"), std::string::npos) << s.message();
  nvml.Set("gpu0.clock_reasons", "0x1");  // GpuIdle
  EXPECT_TRUE(f->Verify().ok());
  nvml.Set("gpu0.clock_reasons", "0x2");  // applications clocks setting alone explains nothing
  EXPECT_FALSE(f->Verify().ok());
}

TEST(GpuClockLock, ParamsAndGpuLimitsNameTheKey) {
  FakeNvml nvml;
  nvml.Node(1);
  auto inverted = MakeFault("gpu_clock_lock", {{"gpu", 0}, {"min_mhz", 1500}, {"max_mhz", 1200}},
                            FakeNvmlHost());
  ASSERT_FALSE(inverted.ok());
  EXPECT_EQ(inverted.status().message().rfind("params.min_mhz:", 0), 0u)
      << inverted.status().message();
  auto no_gpu = MakeFault("gpu_clock_lock", {{"min_mhz", 1000}, {"max_mhz", 1200}}, FakeNvmlHost());
  ASSERT_FALSE(no_gpu.ok());
  EXPECT_EQ(no_gpu.status().message().rfind("params.gpu: required", 0), 0u)
      << no_gpu.status().message();
  auto zero =
      MakeFault("gpu_clock_lock", {{"gpu", 0}, {"min_mhz", 0}, {"max_mhz", 1200}}, FakeNvmlHost());
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message().rfind("params.min_mhz:", 0), 0u) << zero.status().message();

  auto too_fast = Make({{"gpu", 0}, {"min_mhz", 1000}, {"max_mhz", 2500}});
  Status s = too_fast->Capture();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind(
                "params.max_mhz: 2500 MHz is above GPU 0's maximum SM clock of 1980 MHz", 0),
            0u)
      << s.message();
  auto missing = Make({{"gpu", 3}, {"min_mhz", 1000}, {"max_mhz", 1200}});
  s = missing->Capture();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("params.gpu: no GPU 3"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("counts 1 GPU"), std::string::npos) << s.message();
  EXPECT_TRUE(nvml.Mutations().empty());
}

TEST(GpuClockLock, RestoredFromJournalResets) {
  FakeNvml nvml;
  nvml.Node(1);
  auto first = Make(kLock);
  ASSERT_TRUE(first->Capture().ok());
  Json record = {{"kind", "gpu_clock_lock"}, {"params", kLock}, {"saved", first->Saved()}};
  ASSERT_TRUE(first->Apply().ok());
  first.reset();  // the agent died; whether Apply ran is unknown to the journal
  auto again = RestoreFault(record, FakeNvmlHost());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE((*again)->VerifyReverted().ok());
  ASSERT_TRUE((*again)->Revert().ok());
  ASSERT_TRUE((*again)->VerifyReverted().ok());
  EXPECT_EQ(nvml.Get("gpu0.locked_max"), "0");
}

}  // namespace
}  // namespace fdrill

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_nvml.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

using Lines = std::vector<std::string>;

const Json kLock = {{"gpu", 0}, {"min_mhz", 1000}, {"max_mhz", 1200}};

TEST(GpuClockLock, ApplyVerifyRevertVerify) {
  FakeNvml nvml(1);
  auto f = MakeOk("gpu_clock_lock", kLock, FakeNvmlHost());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_NE(f->Saved()["prior_lock"].get<std::string>().find("unknown"), std::string::npos);
  EXPECT_FALSE(f->Verify().ok());  // 1980 MHz: not locked yet
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(nvml.Get("gpu0.locked_max"), "1200");
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(nvml.Get("gpu0.locked_max"), "0");
  EXPECT_FALSE(f->Verify().ok());
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlDeviceSetGpuLockedClocks 0 1000 1200",
                                     "nvmlDeviceResetGpuLockedClocks 0"}));
  EXPECT_EQ(f->Target(), "gpu0");
}

TEST(GpuClockLock, RevertAfterFailedApplyTouchesNothing) {
  FakeNvml nvml(1);
  nvml.Set("fail.nvmlDeviceSetGpuLockedClocks", "4");  // NO_PERMISSION: not root
  auto f = MakeOk("gpu_clock_lock", kLock, FakeNvmlHost());
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(ErrorContains(f->Apply(), "Insufficient Permissions"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlDeviceSetGpuLockedClocks 0 1000 1200"}));
}

TEST(GpuClockLock, RevertTwiceResetsOnce) {
  FakeNvml nvml(1);
  auto f = MakeOk("gpu_clock_lock", kLock, FakeNvmlHost());
  // Before Apply there is nothing to reset.
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, nvml));
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlDeviceSetGpuLockedClocks 0 1000 1200",
                                     "nvmlDeviceResetGpuLockedClocks 0"}));
}

TEST(GpuClockLock, BelowTheWindowCountsOnlyWithAnIdleOrPowerReason) {
  FakeNvml nvml(1);
  nvml.Set("gpu0.unlocked_sm_clock", "345");
  auto f = MakeOk("gpu_clock_lock", kLock, FakeNvmlHost());
  ASSERT_TRUE(CapturedAndApplied(*f));
  nvml.Set("gpu0.locked_min", "0");  // the driver lets the clock fall under the lock
  EXPECT_TRUE(ErrorContains(f->Verify(), "345 MHz, below"));
  nvml.Set("gpu0.clock_reasons", "0x1");  // GpuIdle
  EXPECT_TRUE(f->Verify().ok());
  nvml.Set("gpu0.clock_reasons", "0x2");  // applications clocks setting alone explains nothing
  EXPECT_FALSE(f->Verify().ok());
}

TEST(GpuClockLock, ParamsAndGpuLimitsNameTheKey) {
  FakeNvml nvml(1);
  auto expect_key = [](const Json& params, const std::string& key) {
    EXPECT_TRUE(RefusedNaming("gpu_clock_lock", params, FakeNvmlHost(), key));
  };
  expect_key({{"gpu", 0}, {"min_mhz", 1500}, {"max_mhz", 1200}}, "min_mhz");  // inverted
  expect_key({{"gpu", 0}, {"min_mhz", 0}, {"max_mhz", 1200}}, "min_mhz");
  EXPECT_TRUE(ErrorStartsWith(
      ParamsError("gpu_clock_lock", {{"min_mhz", 1000}, {"max_mhz", 1200}}, FakeNvmlHost()),
      "params.gpu: required"));

  auto too_fast =
      MakeOk("gpu_clock_lock", {{"gpu", 0}, {"min_mhz", 1000}, {"max_mhz", 2500}}, FakeNvmlHost());
  EXPECT_TRUE(
      ErrorStartsWith(too_fast->Capture(), StatusCode::kInvalidArgument,
                      "params.max_mhz: 2500 MHz is above GPU 0's maximum SM clock of 1980 MHz"));
  auto missing =
      MakeOk("gpu_clock_lock", {{"gpu", 3}, {"min_mhz", 1000}, {"max_mhz", 1200}}, FakeNvmlHost());
  Status s = missing->Capture();
  EXPECT_TRUE(ErrorContains(s, StatusCode::kNotFound, "params.gpu: no GPU 3"));
  EXPECT_TRUE(ErrorContains(s, "counts 1 GPU"));
  EXPECT_TRUE(nvml.Mutations().empty());
}

TEST(GpuClockLock, RestoredFromJournalResets) {
  FakeNvml nvml(1);
  // The agent died; whether Apply ran is unknown to the journal.
  Json record = JournalApplyAndDie("gpu_clock_lock", kLock, FakeNvmlHost());
  auto again = Restore(record, FakeNvmlHost());
  EXPECT_FALSE(again->VerifyReverted().ok());
  ASSERT_TRUE(Reverted(*again));
  EXPECT_EQ(nvml.Get("gpu0.locked_max"), "0");
}

}  // namespace
}  // namespace fdrill

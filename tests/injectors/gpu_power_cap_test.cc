#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_nvml.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

using Lines = std::vector<std::string>;

TEST(GpuPowerCap, ApplyVerifyRevertVerify) {
  FakeNvml nvml(2);
  auto f = MakeOk("gpu_power_cap", {{"gpu", 1}, {"watts", 350}}, FakeNvmlHost());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["prior_mw"], 700000);
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(nvml.Get("gpu1.power_mw"), "350000");
  EXPECT_EQ(nvml.Get("gpu0.power_mw"), "700000");
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(nvml.Get("gpu1.power_mw"), "700000");
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlDeviceSetPowerManagementLimit 1 350000",
                                     "nvmlDeviceSetPowerManagementLimit 1 700000"}));
}

TEST(GpuPowerCap, RevertsToTheCapturedLimitNotTheDefault) {
  FakeNvml nvml(1);
  nvml.Set("gpu0.power_mw", "512500");
  auto f = MakeOk("gpu_power_cap", {{"gpu", 0}, {"watts", 250}}, FakeNvmlHost());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(nvml.Get("gpu0.power_mw"), "512500");
  ASSERT_TRUE(f->VerifyReverted().ok());
}

TEST(GpuPowerCap, RevertAfterFailedApplyAndTwiceTouchNothingMore) {
  FakeNvml nvml(1);
  nvml.Set("fail.nvmlDeviceSetPowerManagementLimit", "4");
  auto f = MakeOk("gpu_power_cap", {{"gpu", 0}, {"watts", 300}}, FakeNvmlHost());
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(ErrorContains(f->Apply(), StatusCode::kFailedPrecondition,
                            "nvmlDeviceSetPowerManagementLimit: Insufficient Permissions"));
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlDeviceSetPowerManagementLimit 0 300000"}));
}

TEST(GpuPowerCap, WattsOutsideTheGpuRangeNamesParamsWatts) {
  FakeNvml nvml(1);
  nvml.Set("gpu0.power_min_mw", "212500");
  auto f = MakeOk("gpu_power_cap", {{"gpu", 0}, {"watts", 100}}, FakeNvmlHost());
  EXPECT_TRUE(
      ErrorStartsWith(f->Capture(), StatusCode::kInvalidArgument,
                      "params.watts: 100 W is outside GPU 0's allowed range 212.500 W to 700 W"));
  EXPECT_TRUE(ErrorStartsWith(ParamsError("gpu_power_cap", {{"gpu", 0}}, FakeNvmlHost()),
                              "params.watts: required"));
  EXPECT_TRUE(
      RefusedNaming("gpu_power_cap", {{"gpu", 0}, {"watts", "300W"}}, FakeNvmlHost(), "watts"));
  EXPECT_TRUE(nvml.Mutations().empty());
}

TEST(GpuPowerCap, RestoredFromJournalRevertsWhatALostAgentApplied) {
  FakeNvml nvml(1);
  Json record = JournalApplyAndDie("gpu_power_cap", {{"gpu", 0}, {"watts", 400}}, FakeNvmlHost());
  ASSERT_TRUE(Reverted(*Restore(record, FakeNvmlHost())));
  EXPECT_EQ(nvml.Get("gpu0.power_mw"), "700000");
}

}  // namespace
}  // namespace fdrill

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_nvml.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

using Lines = std::vector<std::string>;

TEST(NvlinkBwMode, SystemApplyVerifyRevertVerify) {
  FakeNvml nvml(2);
  auto f = MakeOk("nvlink_bw_mode", {{"mode", "half"}}, FakeNvmlHost());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["prior_mode"], 0);
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(nvml.Get("bw_mode"), "3");
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(nvml.Get("bw_mode"), "0");
  EXPECT_FALSE(f->Verify().ok());
  EXPECT_EQ(nvml.Mutations(),
            (Lines{"nvmlSystemSetNvlinkBwMode 3", "nvmlSystemSetNvlinkBwMode 0"}));
  EXPECT_EQ(f->Target(), "nvlink");
}

TEST(NvlinkBwMode, RevertsToTheCapturedModeNotFull) {
  FakeNvml nvml(1);
  nvml.Set("bw_mode", "4");  // 3quarter, set by someone before the drill
  auto f = MakeOk("nvlink_bw_mode", {{"mode", "off"}}, FakeNvmlHost());
  ASSERT_TRUE(CapturedAndApplied(*f));
  EXPECT_EQ(nvml.Get("bw_mode"), "1");
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(nvml.Get("bw_mode"), "4");
  ASSERT_TRUE(f->VerifyReverted().ok());
}

TEST(NvlinkBwMode, RevertTwiceAndRevertWithoutApplyTouchNothing) {
  FakeNvml nvml(1);
  auto f = MakeOk("nvlink_bw_mode", {{"mode", "min"}}, FakeNvmlHost());
  ASSERT_TRUE(f->Revert().ok());  // before Capture
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, nvml));
  EXPECT_EQ(nvml.Mutations(),
            (Lines{"nvmlSystemSetNvlinkBwMode 2", "nvmlSystemSetNvlinkBwMode 0"}));
}

TEST(NvlinkBwMode, RevertAfterFailedApplyLeavesTheFoundState) {
  FakeNvml nvml(1);
  nvml.Set("fail.nvmlSystemSetNvlinkBwMode", "19");  // IN_USE: a CUDA P2P object exists
  auto f = MakeOk("nvlink_bw_mode", {{"mode", "off"}}, FakeNvmlHost());
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(
      ErrorContains(f->Apply(), StatusCode::kFailedPrecondition, "In use by another client"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlSystemSetNvlinkBwMode 1"}));  // only the failed set
}

TEST(NvlinkBwMode, PerGpuUsesTheDeviceApiAndRestoresBest) {
  FakeNvml nvml(2);
  nvml.Set("gpu1.bw_supported", "0,2,3");
  nvml.Set("gpu1.bw_mode", "0");
  nvml.Set("gpu1.bw_is_best", "1");
  auto f = MakeOk("nvlink_bw_mode", {{"mode", "min"}, {"gpu", 1}}, FakeNvmlHost());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["prior_is_best"], true);
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(nvml.Get("gpu1.bw_mode"), "2");
  EXPECT_EQ(nvml.Get("bw_mode"), "0");  // the rest of the node untouched
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlDeviceSetNvlinkBwMode 1 2 best=0",
                                     "nvmlDeviceSetNvlinkBwMode 1 0 best=1"}));
  EXPECT_EQ(f->Target(), "gpu1");
}

TEST(NvlinkBwMode, PerGpuWithoutTheDeviceApiIsUnsupportedNotSystemWide) {
  FakeNvml nvml(1);  // Hopper: no per-device bandwidth mode
  auto f = MakeOk("nvlink_bw_mode", {{"mode", "half"}, {"gpu", 0}}, FakeNvmlHost());
  Status s = f->Capture();
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.ToString();
  EXPECT_TRUE(nvml.Mutations().empty());
}

TEST(NvlinkBwMode, PerGpuModeTheGpuDoesNotListNamesParamsMode) {
  FakeNvml nvml(1);
  nvml.Set("gpu0.bw_supported", "0,2,3");
  auto f = MakeOk("nvlink_bw_mode", {{"mode", "off"}, {"gpu", 0}}, FakeNvmlHost());
  Status s = f->Capture();
  EXPECT_TRUE(ErrorStartsWith(s, StatusCode::kInvalidArgument, "params.mode:"));
  EXPECT_TRUE(ErrorContains(s, "half (3)"));
}

TEST(NvlinkBwMode, ParamsValidateAndNameTheKey) {
  FakeNvml nvml;
  EXPECT_TRUE(RefusedNaming("nvlink_bw_mode", {{"mode", "quarter"}}, FakeNvmlHost(), "mode"));
  EXPECT_TRUE(
      RefusedNaming("nvlink_bw_mode", {{"mode", "half"}, {"gpu", -1}}, FakeNvmlHost(), "gpu"));
  EXPECT_TRUE(
      ErrorContains(ParamsError("nvlink_bw_mode", {{"mode", "half"}, {"gpus", 0}}, FakeNvmlHost()),
                    "did you mean \"gpu\""));
  EXPECT_TRUE(nvml.Calls().empty());  // params are checked without loading NVML
}

TEST(NvlinkBwMode, RestoredFromJournalRevertsWhatALostAgentApplied) {
  FakeNvml nvml(1);
  Json record = JournalApplyAndDie("nvlink_bw_mode", {{"mode", "off"}}, FakeNvmlHost());
  ASSERT_TRUE(Reverted(*Restore(record, FakeNvmlHost())));
  EXPECT_EQ(nvml.Get("bw_mode"), "0");
}

}  // namespace
}  // namespace fdrill

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_nvml.h"

namespace fdrill {
namespace {

using Lines = std::vector<std::string>;

std::unique_ptr<Fault> Make(Json params) {
  auto f = MakeFault("nvlink_bw_mode", params, FakeNvmlHost());
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(*f) : nullptr;
}

TEST(NvlinkBwMode, SystemApplyVerifyRevertVerify) {
  FakeNvml nvml;
  nvml.Node(2);
  auto f = Make({{"mode", "half"}});
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["prior_mode"], 0);
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok());
  EXPECT_EQ(nvml.Get("bw_mode"), "3");
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(nvml.Get("bw_mode"), "0");
  EXPECT_FALSE(f->Verify().ok());
  EXPECT_EQ(nvml.Mutations(),
            (Lines{"nvmlSystemSetNvlinkBwMode 3", "nvmlSystemSetNvlinkBwMode 0"}));
  EXPECT_EQ(f->Target(), "nvlink");
}

TEST(NvlinkBwMode, RevertsToTheCapturedModeNotFull) {
  FakeNvml nvml;
  nvml.Node(1);
  nvml.Set("bw_mode", "4");  // 3quarter, set by someone before the drill
  auto f = Make({{"mode", "off"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  EXPECT_EQ(nvml.Get("bw_mode"), "1");
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(nvml.Get("bw_mode"), "4");
  ASSERT_TRUE(f->VerifyReverted().ok());
}

TEST(NvlinkBwMode, RevertTwiceAndRevertWithoutApplyTouchNothing) {
  FakeNvml nvml;
  nvml.Node(1);
  auto f = Make({{"mode", "min"}});
  ASSERT_TRUE(f->Revert().ok());  // before Capture
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(nvml.Mutations(),
            (Lines{"nvmlSystemSetNvlinkBwMode 2", "nvmlSystemSetNvlinkBwMode 0"}));
  ASSERT_TRUE(f->VerifyReverted().ok());
}

TEST(NvlinkBwMode, RevertAfterFailedApplyLeavesTheFoundState) {
  FakeNvml nvml;
  nvml.Node(1);
  nvml.Set("fail.nvmlSystemSetNvlinkBwMode", "19");  // IN_USE: a CUDA P2P object exists
  auto f = Make({{"mode", "off"}});
  ASSERT_TRUE(f->Capture().ok());
  Status s = f->Apply();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("In use by another client"), std::string::npos) << s.message();
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlSystemSetNvlinkBwMode 1"}));  // only the failed set
}

TEST(NvlinkBwMode, PerGpuUsesTheDeviceApiAndRestoresBest) {
  FakeNvml nvml;
  nvml.Node(2);
  nvml.Set("gpu1.bw_supported", "0,2,3");
  nvml.Set("gpu1.bw_mode", "0");
  nvml.Set("gpu1.bw_is_best", "1");
  auto f = Make({{"mode", "min"}, {"gpu", 1}});
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["prior_is_best"], true);
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok());
  EXPECT_EQ(nvml.Get("gpu1.bw_mode"), "2");
  EXPECT_EQ(nvml.Get("bw_mode"), "0");  // the rest of the node untouched
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlDeviceSetNvlinkBwMode 1 2 best=0",
                                     "nvmlDeviceSetNvlinkBwMode 1 0 best=1"}));
  EXPECT_EQ(f->Target(), "gpu1");
}

TEST(NvlinkBwMode, PerGpuWithoutTheDeviceApiIsUnsupportedNotSystemWide) {
  FakeNvml nvml;
  nvml.Node(1);  // Hopper: no per-device bandwidth mode
  auto f = Make({{"mode", "half"}, {"gpu", 0}});
  Status s = f->Capture();
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.ToString();
  EXPECT_TRUE(nvml.Mutations().empty());
}

TEST(NvlinkBwMode, PerGpuModeTheGpuDoesNotListNamesParamsMode) {
  FakeNvml nvml;
  nvml.Node(1);
  nvml.Set("gpu0.bw_supported", "0,2,3");
  auto f = Make({{"mode", "off"}, {"gpu", 0}});
  Status s = f->Capture();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("params.mode:", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("half (3)"), std::string::npos) << s.message();
}

TEST(NvlinkBwMode, ParamsValidateAndNameTheKey) {
  FakeNvml nvml;
  auto bad = MakeFault("nvlink_bw_mode", {{"mode", "quarter"}}, FakeNvmlHost());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("params.mode:", 0), 0u) << bad.status().message();
  auto gpu = MakeFault("nvlink_bw_mode", {{"mode", "half"}, {"gpu", -1}}, FakeNvmlHost());
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.status().message().rfind("params.gpu:", 0), 0u) << gpu.status().message();
  auto typo = MakeFault("nvlink_bw_mode", {{"mode", "half"}, {"gpus", 0}}, FakeNvmlHost());
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("did you mean \"gpu\""), std::string::npos)
      << typo.status().message();
  EXPECT_TRUE(nvml.Calls().empty());  // params are checked without loading NVML
}

TEST(NvlinkBwMode, RestoredFromJournalRevertsWhatALostAgentApplied) {
  FakeNvml nvml;
  nvml.Node(1);
  Json params = {{"mode", "off"}};
  auto first = Make(params);
  ASSERT_TRUE(first->Capture().ok());
  Json record = {{"kind", "nvlink_bw_mode"}, {"params", params}, {"saved", first->Saved()}};
  ASSERT_TRUE(first->Apply().ok());
  first.reset();
  auto again = RestoreFault(record, FakeNvmlHost());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE((*again)->Revert().ok());
  ASSERT_TRUE((*again)->VerifyReverted().ok());
  EXPECT_EQ(nvml.Get("bw_mode"), "0");
}

}  // namespace
}  // namespace fdrill

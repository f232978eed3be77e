#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_nvml.h"

namespace fdrill {
namespace {

using Lines = std::vector<std::string>;

std::unique_ptr<Fault> Make(Json params) {
  auto f = MakeFault("gpu_power_cap", params, FakeNvmlHost());
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(*f) : nullptr;
}

TEST(GpuPowerCap, ApplyVerifyRevertVerify) {
  FakeNvml nvml;
  nvml.Node(2);
  auto f = Make({{"gpu", 1}, {"watts", 350}});
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["prior_mw"], 700000);
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok());
  EXPECT_EQ(nvml.Get("gpu1.power_mw"), "350000");
  EXPECT_EQ(nvml.Get("gpu0.power_mw"), "700000");
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(nvml.Get("gpu1.power_mw"), "700000");
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlDeviceSetPowerManagementLimit 1 350000",
                                     "nvmlDeviceSetPowerManagementLimit 1 700000"}));
}

TEST(GpuPowerCap, RevertsToTheCapturedLimitNotTheDefault) {
  FakeNvml nvml;
  nvml.Node(1);
  nvml.Set("gpu0.power_mw", "512500");
  auto f = Make({{"gpu", 0}, {"watts", 250}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(nvml.Get("gpu0.power_mw"), "512500");
  ASSERT_TRUE(f->VerifyReverted().ok());
}

TEST(GpuPowerCap, RevertAfterFailedApplyAndTwiceTouchNothingMore) {
  FakeNvml nvml;
  nvml.Node(1);
  nvml.Set("fail.nvmlDeviceSetPowerManagementLimit", "4");
  auto f = Make({{"gpu", 0}, {"watts", 300}});
  ASSERT_TRUE(f->Capture().ok());
  Status s = f->Apply();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("nvmlDeviceSetPowerManagementLimit: Insufficient Permissions"),
            std::string::npos)
      << s.message();
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(nvml.Mutations(), (Lines{"nvmlDeviceSetPowerManagementLimit 0 300000"}));
}

TEST(GpuPowerCap, WattsOutsideTheGpuRangeNamesParamsWatts) {
  FakeNvml nvml;
  nvml.Node(1);
  nvml.Set("gpu0.power_min_mw", "212500");
  auto f = Make({{"gpu", 0}, {"watts", 100}});
  Status s = f->Capture();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind(
                "params.watts: 100 W is outside GPU 0's allowed range 212.500 W to 700 W", 0),
            0u)
      << s.message();
  auto none = MakeFault("gpu_power_cap", {{"gpu", 0}}, FakeNvmlHost());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message().rfind("params.watts: required", 0), 0u)
      << none.status().message();
  auto text = MakeFault("gpu_power_cap", {{"gpu", 0}, {"watts", "300W"}}, FakeNvmlHost());
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message().rfind("params.watts:", 0), 0u) << text.status().message();
  EXPECT_TRUE(nvml.Mutations().empty());
}

TEST(GpuPowerCap, RestoredFromJournalRevertsWhatALostAgentApplied) {
  FakeNvml nvml;
  nvml.Node(1);
  Json params = {{"gpu", 0}, {"watts", 400}};
  auto first = Make(params);
  ASSERT_TRUE(first->Capture().ok());
  Json record = {{"kind", "gpu_power_cap"}, {"params", params}, {"saved", first->Saved()}};
  ASSERT_TRUE(first->Apply().ok());
  first.reset();
  auto again = RestoreFault(record, FakeNvmlHost());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE((*again)->Revert().ok());
  ASSERT_TRUE((*again)->VerifyReverted().ok());
  EXPECT_EQ(nvml.Get("gpu0.power_mw"), "700000");
}

}  // namespace
}  // namespace fdrill

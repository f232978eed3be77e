// The NVML loader and the three NVML probes, against the fake
// libnvidia-ml (tests/fakes/fake_nvml.cc) and against a library that is not there.
#include "injectors/nvml.h"

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_nvml.h"

namespace fdrill {
namespace {

constexpr const char* kNvmlKinds[] = {"nvlink_bw_mode", "gpu_clock_lock", "gpu_power_cap"};

TEST(Nvml, DefaultLibraryIsTheDriverSoname) {
  unsetenv("FDRILL_NVML_LIBRARY");
  EXPECT_EQ(NvmlLibraryPath(), "libnvidia-ml.so.1");
}

TEST(Nvml, ProbeWithoutTheLibraryIsUnsupported) {
  Host host;
  host.gpus = &NvmlAt("/nonexistent/libnvidia-ml.so.1");
  for (const char* kind : kNvmlKinds) {
    Status s = FindInjector(kind)->probe(Json::object(), host);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << kind;
    EXPECT_EQ(s.message().rfind("/nonexistent/libnvidia-ml.so.1 not found: ", 0), 0u)
        << s.message();
  }
  // A fault built there fails the same way at Capture, touching nothing.
  auto f = MakeFault("gpu_power_cap", {{"gpu", 0}, {"watts", 300}}, host);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->Capture().code(), StatusCode::kUnsupported);
}

// A Host without gpus (the controller validating a scenario, a fake machine):
// faults are built and planned, and fail only when they would touch a GPU.
TEST(Nvml, AHostWithoutGpusBuildsFaultsThatFailWhenTheyTouchOne) {
  for (const char* kind : kNvmlKinds) {
    Status s = FindInjector(kind)->probe(Json::object(), Host{});
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << kind;
    EXPECT_NE(s.message().find("no NVML on this host"), std::string::npos) << s.message();
  }
  auto f = MakeFault("gpu_clock_lock", {{"gpu", 0}, {"min_mhz", 900}, {"max_mhz", 900}}, Host{});
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE((*f)->Mechanism().empty());
  EXPECT_EQ((*f)->Capture().code(), StatusCode::kUnsupported);
  EXPECT_TRUE((*f)->Revert().ok());  // nothing captured: nothing to restore
}

TEST(Nvml, ProbeNamesParamsGpuAndTheCountWhenOutOfRange) {
  FakeNvml nvml(2);
  for (const char* kind : kNvmlKinds) {
    Status s = FindInjector(kind)->probe({{"gpu", 2}}, FakeNvmlHost());
    EXPECT_EQ(s.code(), StatusCode::kNotFound) << kind << ": " << s.ToString();
    EXPECT_EQ(s.message().rfind("params.gpu: no GPU 2 on this node; NVML counts 2 GPU(s)", 0), 0u)
        << s.message();
  }
  EXPECT_TRUE(nvml.Mutations().empty());
}

TEST(Nvml, ProbesPassOnACapableNode) {
  FakeNvml nvml(2);
  EXPECT_TRUE(FindInjector("gpu_clock_lock")->probe({{"gpu", 1}}, FakeNvmlHost()).ok());
  EXPECT_TRUE(FindInjector("gpu_power_cap")->probe(Json::object(), FakeNvmlHost()).ok());
  EXPECT_TRUE(FindInjector("nvlink_bw_mode")->probe(Json::object(), FakeNvmlHost()).ok());
  // Per GPU needs the Blackwell API, which this node's GPU 1 lacks.
  EXPECT_EQ(FindInjector("nvlink_bw_mode")->probe({{"gpu", 1}}, FakeNvmlHost()).code(),
            StatusCode::kUnsupported);
  nvml.Set("gpu1.bw_supported", "0,3");
  EXPECT_TRUE(FindInjector("nvlink_bw_mode")->probe({{"gpu", 1}}, FakeNvmlHost()).ok());
  // Pre-Hopper: the system-wide read answers NOT_SUPPORTED.
  nvml.Set("fail.nvmlSystemGetNvlinkBwMode", "3");
  Status s = FindInjector("nvlink_bw_mode")->probe(Json::object(), FakeNvmlHost());
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("nvmlSystemGetNvlinkBwMode: Not Supported"), std::string::npos)
      << s.message();
  EXPECT_TRUE(nvml.Mutations().empty());
}

TEST(Nvml, ErrorsCarryTheCallAndNvmlsText) {
  FakeNvml nvml(1);
  nvml.Set("fail.nvmlDeviceGetPowerManagementLimit", "999");
  auto f = MakeFault("gpu_power_cap", {{"gpu", 0}, {"watts", 300}}, FakeNvmlHost());
  ASSERT_TRUE(f.ok());
  Status s = (*f)->Capture();
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find(
                "gpu_power_cap gpu0: nvmlDeviceGetPowerManagementLimit: Unknown Error (999)"),
            std::string::npos)
      << s.message();
}

TEST(Nvml, RegistryListsTheNvmlKindsWithProbes) {
  for (const char* kind : kNvmlKinds) {
    const InjectorInfo* info = FindInjector(kind);
    ASSERT_NE(info, nullptr) << kind;
    EXPECT_NE(info->probe, nullptr) << kind;
    EXPECT_NE(std::string(info->params), "") << kind;
  }
  auto f =
      MakeFault("gpu_clock_lock", {{"gpu", 0}, {"min_mhz", 900}, {"max_mhz", 900}}, FakeNvmlHost());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->Mechanism(), (std::vector<std::string>{
                                   "apply: nvmlDeviceSetGpuLockedClocks(gpu 0, 900 MHz, 900 MHz)",
                                   "revert: nvmlDeviceResetGpuLockedClocks(gpu 0)"}));
}

}  // namespace
}  // namespace fdrill

// nccl_env against FakeSysFs, and the launch-env files it leaves
// (common/host/launch_env.h) on the real filesystem.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/host/launch_env.h"
#include "injectors/injector.h"
#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

constexpr char kDir[] = "/tmp/n1/fdrill-launch-env";

class NcclEnvTest : public ::testing::Test {
 protected:
  Host MakeHost() {
    Host h{&runner_, &sysfs_, nullptr};
    h.launch_env_dir = kDir;
    return h;
  }
  FakeProcessRunner runner_;
  FakeSysFs sysfs_;
};

TEST_F(NcclEnvTest, WritesTheRestrictionsForTheNextLaunchAndRemovesThem) {
  auto f = MakeFault(
      "nccl_env", {{"p2p_disable", true}, {"nvls_enable", false}, {"max_channels", 4}}, MakeHost());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE((*f)->Capture().ok());
  const std::string file = (*f)->Saved()["file"];
  EXPECT_EQ(file.rfind(std::string(kDir) + "/nccl_env-", 0), 0u) << file;
  EXPECT_FALSE((*f)->Verify().ok());
  ASSERT_TRUE((*f)->Apply().ok());
  EXPECT_EQ(sysfs_.dirs_made, std::vector<std::string>{kDir});
  EXPECT_EQ(sysfs_.files[file],
            "NCCL_MAX_CTAS=4\nNCCL_MAX_NCHANNELS=4\nNCCL_NVLS_ENABLE=0\nNCCL_P2P_DISABLE=1\n");
  ASSERT_TRUE((*f)->Verify().ok());
  sysfs_.files[file] = "NCCL_P2P_DISABLE=0\n";  // someone else's edit: observed, not assumed
  EXPECT_FALSE((*f)->Verify().ok());
  ASSERT_TRUE((*f)->Revert().ok());
  ASSERT_TRUE((*f)->VerifyReverted().ok());
  ASSERT_TRUE((*f)->Revert().ok());  // twice
  EXPECT_EQ(sysfs_.files.count(file), 0u);
}

TEST_F(NcclEnvTest, RevertAfterAFailedApplyAndFromTheJournal) {
  auto f = MakeFault("nccl_env", {{"ib_hca", "=mlx5_0:1"}}, MakeHost());
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Capture().ok());
  Json record = {
      {"kind", "nccl_env"}, {"params", {{"ib_hca", "=mlx5_0:1"}}}, {"saved", (*f)->Saved()}};
  ASSERT_TRUE((*f)->Revert().ok());  // nothing written yet
  ASSERT_TRUE((*f)->Apply().ok());
  auto restored = RestoreFault(record, MakeHost());
  ASSERT_TRUE(restored.ok());
  ASSERT_TRUE((*restored)->Revert().ok());
  EXPECT_TRUE((*restored)->VerifyReverted().ok());
  EXPECT_TRUE((*f)->VerifyReverted().ok());
}

TEST_F(NcclEnvTest, ParamsNameTheKey) {
  auto none = MakeFault("nccl_env", Json::object(), MakeHost());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("at least one of p2p_disable"), std::string::npos);
  auto bad_bool = MakeFault("nccl_env", {{"p2p_disable", "yes"}}, MakeHost());
  EXPECT_NE(bad_bool.status().message().find("params.p2p_disable: must be true or false"),
            std::string::npos)
      << bad_bool.status().message();
  auto bad_hca = MakeFault("nccl_env", {{"ib_hca", "mlx5_0; rm -rf /"}}, MakeHost());
  EXPECT_NE(bad_hca.status().message().find("params.ib_hca"), std::string::npos);
  auto channels = MakeFault("nccl_env", {{"max_channels", 0}}, MakeHost());
  EXPECT_NE(channels.status().message().find("params.max_channels"), std::string::npos);
  auto typo = MakeFault("nccl_env", {{"p2p_disabled", true}}, MakeHost());
  EXPECT_NE(typo.status().message().find("did you mean \"p2p_disable\""), std::string::npos);
}

TEST_F(NcclEnvTest, AnAgentWithoutALaunchDirIsUnsupported) {
  auto f = MakeFault("nccl_env", {{"p2p_disable", true}}, Host{&runner_, &sysfs_, nullptr});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->Capture().code(), StatusCode::kUnsupported);
}

TEST(LaunchEnv, ReadsEveryEnvFileAndRefusesNonNcclNames) {
  const std::string dir = ::testing::TempDir() + "launch-env-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  EXPECT_TRUE(ReadLaunchEnv(dir + "/absent")->empty());
  std::ofstream(dir + "/a.env") << "NCCL_P2P_DISABLE=1\nNCCL_IB_HCA==mlx5_0:1\n";
  std::ofstream(dir + "/b.env") << "NCCL_P2P_DISABLE=0\n";
  std::ofstream(dir + "/ignored.txt") << "PATH=/evil\n";
  auto env = ReadLaunchEnv(dir);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(*env, (std::map<std::string, std::string>{{"NCCL_IB_HCA", "=mlx5_0:1"},
                                                      {"NCCL_P2P_DISABLE", "0"}}));
  std::ofstream(dir + "/c.env") << "NCCL_X=1\nLD_PRELOAD=/evil.so\n";
  auto refused = ReadLaunchEnv(dir);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("c.env:2: expected NCCL_NAME=VALUE"), std::string::npos)
      << refused.status().message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdrill

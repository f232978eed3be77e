// fdrill-collective's NCCL backend on a real GPU: one rank (any GPU count
// works), a clean run and a caught corruption. Skips where there is no
// NVIDIA driver or the binary was built without NCCL.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "harness/host/real_process_runner.h"

namespace fdrill {
namespace {

ProcessResult RunOneRank(const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {
      FDRILL_MPIEXEC, "--allow-run-as-root", "-np", "1", FDRILL_COLLECTIVE_BIN, "--backend",
      "nccl",         "--timeout",           "30s"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  Result<ProcessResult> r = RealProcessRunner().Run(argv, std::chrono::seconds(120));
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : ProcessResult{};
}

class WorkloadNcclHwTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!FDRILL_COLLECTIVE_HAS_NCCL) GTEST_SKIP() << "built without NCCL";
    struct stat st;
    if (stat("/dev/nvidiactl", &st) != 0) GTEST_SKIP() << "no NVIDIA driver (/dev/nvidiactl) on this machine";
  }
};

TEST_F(WorkloadNcclHwTest, CleanRunOnOneGpu) {
  ProcessResult r = RunOneRank({"-b", "4M", "-n", "20"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("     4194304       1048576   float32     sum"), std::string::npos) << r.out;
}

TEST_F(WorkloadNcclHwTest, CorruptionIsCaught) {
  ProcessResult r = RunOneRank({"-b", "4M", "-n", "10", "--corrupt-at", "3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("data check FAILED: rank 0 iter 3: 1 of 1048576 elements wrong"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fdrill

// fdrill-collective's NCCL backend on a real GPU: one rank (any GPU count
// works), a clean run, a caught corruption for every op and the half types,
// and the training loop. Skips where there is no NVIDIA driver or the
// binary was built without NCCL.
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/host/real_process_runner.h"

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
    if (stat("/dev/nvidiactl", &st) != 0)
      GTEST_SKIP() << "no NVIDIA driver (/dev/nvidiactl) on this machine";
  }
};

TEST_F(WorkloadNcclHwTest, CleanRunOnOneGpu) {
  ProcessResult r = RunOneRank({"-b", "4M", "-n", "20"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("     4194304       1048576   float32     sum"), std::string::npos) << r.out;
  // The NCCL and CUDA runtime the rank loaded (workloads/libraries.h).
  EXPECT_NE(r.out.find(": NCCL 2."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/libnccl.so"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# loaded cudart on "), std::string::npos) << r.out;
}

TEST_F(WorkloadNcclHwTest, CorruptionIsCaught) {
  ProcessResult r = RunOneRank({"-b", "4M", "-n", "10", "--corrupt-at", "3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("data check FAILED: rank 0 iter 3: 1 of 1048576 elements wrong"),
            std::string::npos)
      << r.err;
}

TEST_F(WorkloadNcclHwTest, EveryOpAndHalfTypeChecksAndCatchesCorruption) {
  for (std::string op : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
                         "alltoall", "sendrecv"}) {
    for (std::string dtype : {"float32", "float16", "bfloat16"}) {
      ProcessResult r = RunOneRank({"--op", op, "--dtype", dtype, "-b", "64K", "-e", "256K", "-f",
                                    "4", "-n", "4", "--corrupt-at", "5"});
      EXPECT_EQ(r.exit_code, 3) << op << " " << dtype << ": " << r.err;
      EXPECT_NE(r.err.find("data check FAILED: rank 0 iter 5: 1 of "), std::string::npos) << r.err;
      EXPECT_NE(r.out.find("      262144 "), std::string::npos) << r.out;
    }
  }
}

TEST_F(WorkloadNcclHwTest, TrainingLoopPrintsItsDigest) {
  char pattern[] = "/tmp/fdrill-hw-train-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  ProcessResult r = RunOneRank({"--train", "--steps", "12", "--checkpoint-every", "5",
                                "--checkpoint-dir", pattern, "-b", "1M"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("digest: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("steps_redone: 0"), std::string::npos) << r.out;
  std::filesystem::remove_all(pattern);
}

}  // namespace
}  // namespace fdrill

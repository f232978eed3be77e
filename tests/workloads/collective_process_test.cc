// fdrill-collective as a process, under mpirun, with two ranks on this
// machine. mpirun flags (see kMpirun): --allow-run-as-root (CI runs as
// root and Open MPI refuses otherwise), --oversubscribe (runners may have
// fewer cores than ranks; Open MPI counts one slot per core), --mca btl
// self,vader,tcp (shared memory and loopback TCP only; no HCA probing). The
// emulated fabric adds --mca rtc ^hwloc and a per-node TMPDIR (DESIGN.md);
// a plain local run does not need them.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness/host/real_process_runner.h"

namespace fdrill {
namespace {

const std::vector<std::string> kMpirun = {
    FDRILL_MPIEXEC, "--allow-run-as-root", "--oversubscribe",    "-np", "2", "--mca",
    "btl",          "self,vader,tcp",      FDRILL_COLLECTIVE_BIN};

class WorkloadProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "fdrill-collective-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs fdrill-collective on two ranks with `flags`; fails the test if it
  // hangs (a hang is the bug these tests exist to catch).
  ProcessResult RunTwoRanks(const std::vector<std::string>& flags) {
    std::vector<std::string> argv = kMpirun;
    argv.insert(argv.end(), flags.begin(), flags.end());
    Result<ProcessResult> r = RealProcessRunner().Run(argv, std::chrono::seconds(60));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : ProcessResult{};
  }

  std::vector<nlohmann::json> Records(int rank) {
    std::vector<nlohmann::json> out;
    std::ifstream in(dir_ + "/r" + std::to_string(rank) + ".jsonl");
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }

  std::string Jsonl() const { return dir_ + "/r{rank}.jsonl"; }

  std::string dir_;
};

TEST_F(WorkloadProcessTest, TwentyIntactIterationsPerRank) {
  ProcessResult r = RunTwoRanks({"-b", "64K", "-n", "20", "--jsonl", Jsonl()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::set<std::string> keys = {"rank",    "nranks",  "host",       "iter",       "op",
                                      "dtype",   "redop",   "bytes",      "count",      "wall_ns",
                                      "mono_ns", "time_ms", "algbw_gbps", "busbw_gbps", "wrong"};
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<nlohmann::json> records = Records(rank);
    ASSERT_EQ(records.size(), 20u) << "rank " << rank;
    for (size_t i = 0; i < records.size(); ++i) {
      const nlohmann::json& j = records[i];
      std::set<std::string> got;
      for (auto it = j.begin(); it != j.end(); ++it) got.insert(it.key());
      EXPECT_EQ(got, keys);
      EXPECT_EQ(j["rank"], rank);
      EXPECT_EQ(j["nranks"], 2);
      EXPECT_EQ(j["iter"], i);
      EXPECT_EQ(j["op"], "all_reduce");
      EXPECT_EQ(j["dtype"], "float32");
      EXPECT_EQ(j["redop"], "sum");
      EXPECT_EQ(j["bytes"], 65536);
      EXPECT_EQ(j["count"], 16384);
      EXPECT_EQ(j["wrong"], 0);
      EXPECT_GT(j["time_ms"].get<double>(), 0.0);
      // Two ranks: all_reduce's bus factor 2(n-1)/n is 1.
      EXPECT_DOUBLE_EQ(j["busbw_gbps"].get<double>(), j["algbw_gbps"].get<double>());
    }
  }
  EXPECT_NE(r.out.find("       65536         16384   float32     sum"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Avg bus bandwidth    : "), std::string::npos) << r.out;
}

TEST_F(WorkloadProcessTest, CorruptionIsReportedAndExitsThree) {
  ProcessResult r = RunTwoRanks({"-b", "64K", "-n", "20", "--corrupt-at", "5", "--jsonl", Jsonl()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("fdrill-collective: data check FAILED: rank 0 iter 5: 1 of 16384 elements wrong"),
            std::string::npos)
      << r.err;
  std::vector<nlohmann::json> records = Records(0);
  ASSERT_EQ(records.size(), 20u);
  for (const auto& j : records) EXPECT_EQ(j["wrong"], j["iter"] == 5 ? 1 : 0) << j;
}

TEST_F(WorkloadProcessTest, StopFileStopsEveryRankAfterTheSameIteration) {
  std::string stop = dir_ + "/stop";
  std::ofstream(stop) << "";
  ProcessResult r = RunTwoRanks({"-b", "64K", "-n", "1000000", "-w", "0", "--stop-file", stop, "--jsonl", Jsonl()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Rank 0 sees the file after the first timed iteration; every rank agrees
  // during the second and stops there.
  EXPECT_EQ(Records(0).size(), 2u);
  EXPECT_EQ(Records(1).size(), 2u);
  EXPECT_NE(r.out.find("# stopped after 2 timed iterations"), std::string::npos) << r.out;
}

TEST_F(WorkloadProcessTest, DurationStopsEveryRankAfterTheSameIteration) {
  ProcessResult r = RunTwoRanks({"-b", "4K", "--duration", "300ms", "--jsonl", Jsonl()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(Records(0).size(), 1u);
  EXPECT_EQ(Records(0).size(), Records(1).size());
}

TEST_F(WorkloadProcessTest, BadFlagExitsTwoWithoutStartingMpi) {
  ProcessResult r = RunTwoRanks({"-b", "6", "-n", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("multiple of 4 bytes"), std::string::npos) << r.err;
}

TEST_F(WorkloadProcessTest, NcclWithoutGpuExitsTwoOnEveryRank) {
  if (!FDRILL_COLLECTIVE_HAS_NCCL) GTEST_SKIP() << "built without NCCL; WorkloadCli covers the message";
  struct stat st;
  if (stat("/dev/nvidiactl", &st) == 0)
    GTEST_SKIP() << "this machine has an NVIDIA driver; workloads_hw_test runs NCCL";
  ProcessResult r = RunTwoRanks({"-b", "64K", "-n", "5", "--backend", "nccl"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("fdrill-collective: backend nccl: no CUDA device (cudaGetDeviceCount: "), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace fdrill

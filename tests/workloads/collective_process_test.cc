// fdrill-collective as a process, under mpirun, with two or three ranks on
// this machine. mpirun flags (see Mpirun()): --allow-run-as-root (CI runs as
// root and Open MPI refuses otherwise), --oversubscribe (runners may have
// fewer cores than ranks; Open MPI counts one slot per core), --mca btl
// self,vader,tcp (shared memory and loopback TCP only; no HCA probing). The
// emulated fabric adds --mca rtc ^hwloc and a per-node TMPDIR (DESIGN.md);
// a plain local run does not need them.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/host/real_process_runner.h"
#include "tests/support/json_lines.h"
#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

// Every run gets its own TMPDIR, so its Open MPI session directory
// (<TMPDIR>/ompi.<host>.<uid>) is its own: ctest runs these tests in
// parallel, and mpirun removes the shared /tmp/ompi.<host>.<uid> when it ends,
// under a second mpirun that is creating its pid.N directory there (CI saw
// "A call to mkdir was unable to create the desired directory").
std::vector<std::string> Mpirun(int nranks, const std::string& tmpdir) {
  return {"env",
          "TMPDIR=" + tmpdir,
          FDRILL_MPIEXEC,
          "--allow-run-as-root",
          "--oversubscribe",
          "-np",
          std::to_string(nranks),
          "--mca",
          "btl",
          "self,vader,tcp",
          FDRILL_COLLECTIVE_BIN};
}

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + 1)) ++n;
  return n;
}

const std::set<std::string> kRecordKeys = {
    "rank",  "nranks",  "host",    "iter",    "op",      "dtype",      "redop",      "bytes",
    "count", "wall_ns", "mono_ns", "time_ms", "wait_ms", "algbw_gbps", "busbw_gbps", "wrong"};

std::set<std::string> KeysOf(const nlohmann::json& j) {
  std::set<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.insert(it.key());
  return keys;
}

class WorkloadProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("fdrill-collective-");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs fdrill-collective on `nranks` ranks with `flags`; fails the test
  // if it hangs (a hang is the bug these tests exist to catch).
  ProcessResult RunRanks(int nranks, const std::vector<std::string>& flags) {
    std::vector<std::string> argv = Mpirun(nranks, dir_);
    argv.insert(argv.end(), flags.begin(), flags.end());
    Result<ProcessResult> r = RealProcessRunner().Run(argv, std::chrono::seconds(60));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : ProcessResult{};
  }
  ProcessResult RunTwoRanks(const std::vector<std::string>& flags) { return RunRanks(2, flags); }

  std::vector<nlohmann::json> Records(int rank) {
    return ReadJsonLines(dir_ + "/r" + std::to_string(rank) + ".jsonl");
  }

  std::string Jsonl() const { return dir_ + "/r{rank}.jsonl"; }

  std::string dir_;
};

std::string ThisHost() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

TEST_F(WorkloadProcessTest, TwentyIntactIterationsPerRank) {
  ProcessResult r = RunTwoRanks({"-b", "64K", "-n", "20", "--jsonl", Jsonl()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::set<std::string>& keys = kRecordKeys;
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
  EXPECT_NE(r.out.find("       65536         16384   float32     sum     -1"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# Avg bus bandwidth    : "), std::string::npos) << r.out;
  // Last: the MPI both ranks (one host) loaded, with the file mapped.
  const size_t loaded = r.out.find("# loaded mpi on " + ThisHost() + ": ");
  ASSERT_NE(loaded, std::string::npos) << r.out;
  const std::string line = r.out.substr(loaded, r.out.find('\n', loaded) - loaded);
  EXPECT_NE(line.find(": Open MPI v"), std::string::npos) << line;
  EXPECT_NE(line.find("/libmpi.so."), std::string::npos) << line;
  EXPECT_EQ(r.out.find('\n', loaded) + 1, r.out.size()) << r.out;
}

TEST_F(WorkloadProcessTest, CorruptionIsReportedAndExitsThree) {
  ProcessResult r = RunTwoRanks({"-b", "64K", "-n", "20", "--corrupt-at", "5", "--jsonl", Jsonl()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("fdrill-collective: data check FAILED: rank 0 iter 5: 1 of 16384 elements "
                       "wrong, first at "
                       "index 8192: got 0 expected "),
            std::string::npos)
      << r.err;
  std::vector<nlohmann::json> records = Records(0);
  ASSERT_EQ(records.size(), 20u);
  for (const auto& j : records) EXPECT_EQ(j["wrong"], j["iter"] == 5 ? 1 : 0) << j;
}

TEST_F(WorkloadProcessTest, StopFileStopsEveryRankAfterTheSameIteration) {
  std::string stop = dir_ + "/stop";
  // Only rank 0 looks at the file; the line-up carries its decision to rank
  // 1 before the next collective. Written once rank 0 has a record (not
  // after a fixed time: on a loaded machine mpirun alone can take longer).
  const std::string first = dir_ + "/r0.jsonl";
  std::thread later([&] {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < give_up) {
      std::ifstream in(first);
      std::string line;
      if (std::getline(in, line) && !line.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::ofstream(stop) << "";
  });
  ProcessResult r = RunTwoRanks(
      {"-b", "64K", "-n", "1000000", "-w", "0", "--stop-file", stop, "--jsonl", Jsonl()});
  later.join();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t n = Records(0).size();
  EXPECT_GE(n, 1u);
  EXPECT_EQ(Records(1).size(), n);
  EXPECT_NE(r.out.find("# stopped after " + std::to_string(n) + " timed iterations"),
            std::string::npos)
      << r.out;
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
  if (!FDRILL_COLLECTIVE_HAS_NCCL)
    GTEST_SKIP() << "built without NCCL; WorkloadCli covers the message";
  struct stat st;
  if (stat("/dev/nvidiactl", &st) == 0)
    GTEST_SKIP() << "this machine has an NVIDIA driver; workloads_hw_test runs NCCL";
  ProcessResult r = RunTwoRanks({"-b", "64K", "-n", "5", "--backend", "nccl"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("fdrill-collective: backend nccl: no CUDA device (cudaGetDeviceCount: "),
            std::string::npos)
      << r.err;
}

// nccl-tests' bus factor of `op` on n ranks, written out independently of
// the workload's own table.
double NcclTestsBusFactor(const std::string& op, int n) {
  if (op == "all_reduce") return 2.0 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "alltoall")
    return static_cast<double>(n - 1) / n;
  return 1.0;
}

bool Reduces(const std::string& op) {
  return op == "all_reduce" || op == "reduce_scatter" || op == "reduce";
}

using OpCase = std::tuple<std::string, std::string, int>;  // op, dtype, ranks

class WorkloadProcessOpTest : public WorkloadProcessTest,
                              public ::testing::WithParamInterface<OpCase> {};

// Every op on every rank checks out, except the one element the test hook
// breaks on rank 0 at iteration 3, which is caught there and only there.
TEST_P(WorkloadProcessOpTest, RunsChecksAndCatchesACorruptedElement) {
  auto [op, dtype, n] = GetParam();
  const uint64_t bytes = 12288;  // a whole number of elements divisible by 2 and 3
  const uint64_t elements = bytes / (dtype == "bfloat16" ? 2 : 4);
  const bool split = op == "all_gather" || op == "reduce_scatter" || op == "alltoall";
  const uint64_t count = split ? elements / n : elements;
  const uint64_t recv_count = op == "reduce_scatter" ? elements / n : elements;
  ProcessResult r = RunRanks(n, {"--op", op, "--dtype", dtype, "-b", "12K", "-n", "6", "-w", "1",
                                 "--corrupt-at", "3", "--jsonl", Jsonl()});
  ASSERT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(Count(r.err, "data check FAILED"), 1u) << r.err;
  EXPECT_NE(r.err.find("data check FAILED: rank 0 iter 3: 1 of " + std::to_string(recv_count) +
                       " elements wrong"),
            std::string::npos)
      << r.err;
  for (int rank = 0; rank < n; ++rank) {
    std::vector<nlohmann::json> records = Records(rank);
    ASSERT_EQ(records.size(), 6u) << "rank " << rank;
    for (const nlohmann::json& j : records) {
      EXPECT_EQ(KeysOf(j), kRecordKeys);
      EXPECT_EQ(j["op"], op);
      EXPECT_EQ(j["dtype"], dtype);
      EXPECT_EQ(j["redop"], Reduces(op) ? "sum" : "none");
      EXPECT_EQ(j["bytes"], bytes);
      EXPECT_EQ(j["count"], count);
      EXPECT_EQ(j["nranks"], n);
      EXPECT_EQ(j["wrong"], rank == 0 && j["iter"] == 3 ? 1 : 0) << j;
      EXPECT_NEAR(j["busbw_gbps"].get<double>(),
                  j["algbw_gbps"].get<double>() * NcclTestsBusFactor(op, n), 1e-9);
    }
  }
  EXPECT_NE(r.out.find("# " + op + " on " + std::to_string(n) + " ranks"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("       12288 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Avg bus bandwidth    : "), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Ops, WorkloadProcessOpTest,
                         ::testing::Combine(::testing::Values("all_reduce", "all_gather",
                                                              "reduce_scatter", "broadcast",
                                                              "reduce", "alltoall", "sendrecv"),
                                            ::testing::Values("float32", "int32", "bfloat16"),
                                            ::testing::Values(2, 3)),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                  std::to_string(std::get<2>(info.param));
                         });

// float16 reduces through the MPI backend's own ops: every reduction,
// clean, on three ranks.
TEST_F(WorkloadProcessTest, Float16ReductionsThroughUserDefinedMpiOps) {
  for (std::string op : {"all_reduce", "reduce_scatter", "reduce"}) {
    for (std::string redop : {"sum", "prod", "min", "max"}) {
      ProcessResult r = RunRanks(3, {"--op", op, "--dtype", "float16", "--redop", redop, "-b", "6K",
                                     "-n", "4", "-w", "1"});
      EXPECT_EQ(r.exit_code, 0) << op << " " << redop << ": " << r.err;
      EXPECT_NE(r.out.find(" float16 " + std::string(7 - redop.size(), ' ') + redop + " "),
                std::string::npos)
          << r.out;
    }
  }
}

TEST_F(WorkloadProcessTest, SweepRunsEverySizeWithItsOwnRow) {
  ProcessResult r = RunTwoRanks({"--op", "all_gather", "-b", "1K", "-e", "7K", "-f", "2", "-n", "3",
                                 "-w", "1", "--jsonl", Jsonl()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<nlohmann::json> records = Records(rank);
    ASSERT_EQ(records.size(), 9u);  // 1K, 2K, 4K: 7K is not on the steps
    for (size_t i = 0; i < records.size(); ++i) {
      EXPECT_EQ(records[i]["iter"], i);
      EXPECT_EQ(records[i]["bytes"], 1024u << (i / 3));
      EXPECT_EQ(records[i]["count"], 128u << (i / 3));
    }
  }
  EXPECT_NE(r.out.find("        1024           128   float32    none     -1"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("        2048           256   float32    none     -1"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("        4096           512   float32    none     -1"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("        8192 "), std::string::npos) << r.out;
  EXPECT_EQ(Count(r.out, "# Avg bus bandwidth    : "), 1u) << r.out;
}

TEST_F(WorkloadProcessTest, BadInputExitsTwoWithTheFlagNamed) {
  // Flag errors come before MPI starts, so every rank says them; errors
  // that depend on the rank count come after, and only rank 0 says them.
  struct Case {
    int nranks;
    std::vector<std::string> flags;
    std::string message;
  };
  const std::vector<Case> cases = {
      {2,
       {"--op", "gather", "-b", "4K", "-n", "1"},
       "unknown --op \"gather\": accepted: all_reduce"},
      {2,
       {"--dtype", "half", "-b", "4K", "-n", "1"},
       "unknown --dtype \"half\": accepted: float32"},
      {2,
       {"--redop", "avg", "-b", "4K", "-n", "1"},
       "unknown --redop \"avg\": accepted: sum, prod, min, max"},
      {2,
       {"-b", "4K", "-e", "1K", "-f", "2", "-n", "1"},
       "-e/--maxbytes 1024 is less than -b/--minbytes 4096"},
      {3,
       {"--op", "all_gather", "-b", "64K", "-n", "1"},
       "size 65536 B (-b/-e): all_gather on 3 ranks needs an element count divisible by 3, not "
       "16384; a size that "
       "works: 65532"},
      {3,
       {"--op", "alltoall", "-b", "1K", "-e", "4K", "-f", "2", "-n", "1"},
       "size 1024 B (-b/-e): alltoall on 3"},
      {2,
       {"--op", "broadcast", "--root", "2", "-b", "4K", "-n", "1"},
       "--root 2 is not a rank: this run has 2 ranks"},
  };
  for (const Case& c : cases) {
    ProcessResult r = RunRanks(c.nranks, c.flags);
    EXPECT_EQ(r.exit_code, 2) << c.message << ": " << r.err;
    const bool before_mpi = c.message.find("size ") != 0 && c.message.find("--root") != 0;
    EXPECT_EQ(Count(r.err, c.message), before_mpi ? static_cast<size_t>(c.nranks) : 1u) << r.err;
  }
}

// The digest fdrill-collective --train prints equals fdrill-train-ref's for
// the steps it reports done — also when a stop file ends it early, which is
// how a drill ends a training job.
TEST_F(WorkloadProcessTest, TrainDigestEqualsTheReferenceForTheStepsDone) {
  RealProcessRunner runner;
  auto value = [](const std::string& out, const std::string& key) {
    size_t at = out.find(key + ": ");
    return at == std::string::npos
               ? std::string("<none>")
               : out.substr(at + key.size() + 2, out.find('\n', at) - at - key.size() - 2);
  };
  const std::string dir = dir_ + "/ref";
  ProcessResult full = RunTwoRanks({"--train", "--steps", "30", "--checkpoint-every", "10",
                                    "--checkpoint-dir", dir, "-b", "8K"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_EQ(value(full.out, "steps_done"), "30");
  auto ref = runner.Run({FDRILL_TRAIN_REF_BIN, "--nranks", "2", "--steps", "30", "-b", "8K"},
                        std::chrono::seconds(30));
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->out, "digest: " + value(full.out, "digest") + "\n");
  // Stopped before its last step: the digest is of the steps it did.
  const std::string stop = dir_ + "/stop-now";
  std::ofstream(stop) << "";
  ProcessResult stopped =
      RunTwoRanks({"--train", "--steps", "100000", "--checkpoint-every", "10", "--checkpoint-dir",
                   dir_ + "/ref2", "-b", "8K", "--stop-file", stop});
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  const std::string done = value(stopped.out, "steps_done");
  ASSERT_NE(done, "<none>") << stopped.out;
  EXPECT_LT(std::stoll(done), 100000);
  auto ref2 = runner.Run({FDRILL_TRAIN_REF_BIN, "--nranks", "2", "--steps", done, "-b", "8K"},
                         std::chrono::seconds(30));
  ASSERT_TRUE(ref2.ok());
  EXPECT_EQ(ref2->out, "digest: " + value(stopped.out, "digest") + "\n");
}

// --train killed at step 25 (rank 1 SIGKILLs itself), run again: it resumes
// at the checkpoint of step 20, redoes 20..24, and ends with the digest of
// a run that was never interrupted.
TEST_F(WorkloadProcessTest, TrainKilledAndResumedEndsWithTheFaultFreeDigest) {
  auto train = [&](const std::string& dir, std::vector<std::string> more) {
    std::vector<std::string> flags = {
        "--train", "--steps", "40",      "--checkpoint-every",  "10", "--checkpoint-dir", dir,
        "-b",      "64K",     "--jsonl", dir + "/r{rank}.jsonl"};
    flags.insert(flags.end(), more.begin(), more.end());
    return RunTwoRanks(flags);
  };
  auto digest_of = [](const std::string& out) {
    size_t at = out.find("digest: ");
    return at == std::string::npos ? std::string("<none>") : out.substr(at, 8 + 16);
  };
  const std::string faulty = dir_ + "/faulty", clean = dir_ + "/clean";

  ProcessResult killed = train(faulty, {"--die-at-step", "25"});
  EXPECT_NE(killed.exit_code, 0) << killed.out;
  EXPECT_EQ(killed.out.find("digest: "), std::string::npos) << killed.out;
  std::ifstream progress(faulty + "/progress");
  std::string line;
  std::getline(progress, line);
  EXPECT_EQ(line, "completed                   25 redone                    0");

  ProcessResult resumed = train(faulty, {});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("# train: steps 20..39 of 0..39 (resumed at step 20)"),
            std::string::npos)
      << resumed.out;
  EXPECT_NE(resumed.out.find("steps_redone: 5\n"), std::string::npos) << resumed.out;

  ProcessResult uninterrupted = train(clean, {});
  ASSERT_EQ(uninterrupted.exit_code, 0) << uninterrupted.err;
  EXPECT_NE(uninterrupted.out.find("steps_redone: 0\n"), std::string::npos) << uninterrupted.out;
  EXPECT_NE(digest_of(uninterrupted.out), "<none>");
  EXPECT_EQ(digest_of(resumed.out), digest_of(uninterrupted.out));

  for (int rank = 0; rank < 2; ++rank) {
    std::vector<nlohmann::json> records =
        ReadJsonLines(faulty + "/r" + std::to_string(rank) + ".jsonl");
    ASSERT_EQ(records.size(), 25u + 20u) << "rank " << rank;  // steps 0..24, then 20..39
    std::set<std::string> keys = kRecordKeys;
    keys.erase("wait_ms");  // the sweep's line-up; training has none
    keys.insert({"step", "restarted"});
    for (size_t i = 0; i < records.size(); ++i) {
      EXPECT_EQ(KeysOf(records[i]), keys);
      EXPECT_EQ(records[i]["step"], i < 25 ? i : i - 5);
      EXPECT_EQ(records[i]["restarted"], i >= 25);
      EXPECT_EQ(records[i]["wrong"], 0);
    }
  }
}

TEST_F(WorkloadProcessTest, UnwritableCheckpointDirExitsTwoBeforeAnyStep) {
  std::ofstream(dir_ + "/file") << "x";
  ProcessResult r = RunTwoRanks({"--train", "--steps", "4", "--checkpoint-every", "2",
                                 "--checkpoint-dir", dir_ + "/file/ck", "-b", "8K"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(
      Count(r.err, "fdrill-collective: --checkpoint-dir " + dir_ + "/file/ck: cannot create it: "),
      1u)
      << r.err;
}

}  // namespace
}  // namespace fdrill

namespace fdrill {
namespace {

// The nccl_env fault's file reaches every rank started on the node
// (common/host/launch_env.h): exported before NCCL could read it, and said
// in the job's log; a file with a non-NCCL name stops the launch (exit 2).
TEST_F(WorkloadProcessTest, ExportsTheLaunchEnvironmentOfItsNode) {
  const std::string launch = dir_ + "/fdrill-launch-env";
  std::filesystem::create_directories(launch);
  std::ofstream(launch + "/nccl_env-1.env") << "NCCL_P2P_DISABLE=1\n";
  std::vector<std::string> argv = Mpirun(2, dir_);
  for (const char* a : {"-b", "4K", "-n", "2"}) argv.push_back(a);
  Result<ProcessResult> r = RealProcessRunner().Run(argv, std::chrono::seconds(60));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0) << r->err;
  EXPECT_NE(r->err.find("launch environment from " + launch + ": NCCL_P2P_DISABLE=1"),
            std::string::npos)
      << r->err;

  std::ofstream(launch + "/nccl_env-2.env") << "LD_PRELOAD=/x.so\n";
  Result<ProcessResult> bad = RealProcessRunner().Run(argv, std::chrono::seconds(60));
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->exit_code, 2) << bad->err;
  EXPECT_NE(bad->err.find("nccl_env-2.env:1: expected NCCL_NAME=VALUE"), std::string::npos)
      << bad->err;
}

}  // namespace
}  // namespace fdrill

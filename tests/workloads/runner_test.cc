// The iteration loop on one rank, without MPI: a one-rank World and a
// loopback backend (the all_reduce of a single rank is its input), whose
// Run() hook lets a test act at an exact iteration.
#include "workloads/runner.h"

#include <time.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/json_lines.h"
#include "tests/support/scratch_dir.h"
#include "tests/workloads/fakes.h"
#include "workloads/pattern.h"
#include "workloads/stop.h"

namespace fdrill {
namespace {

class WorkloadRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ClearStopRequest();
    config_.sizes = {4096};
    config_.warmup = 2;
    config_.iters = 10;
    dir_ = MakeTempDir("fdrill-runner-");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    ClearStopRequest();
    std::filesystem::remove_all(dir_);
  }

  Result<RunOutcome> Run(MetricsWriter* metrics = nullptr) {
    Result<std::vector<SizeStep>> plan = PlanSizes(config_, world_.size());
    if (!plan.ok()) return plan.status();
    return RunWorkload(config_, *plan, world_, backend_, metrics, err_);
  }
  // Run() with its records written to RecordsPath().
  Result<RunOutcome> RunRecorded() {
    auto metrics = MetricsWriter::Open(RecordsPath());
    if (!metrics.ok()) return metrics.status();
    return Run(metrics->get());
  }
  std::string RecordsPath() const { return dir_ + "/r0.jsonl"; }

  // A stop seen during the first warm-up collective: that one ran, no timed
  // iteration did, and the run says it was stopped.
  void ExpectStoppedInWarmup() {
    Result<RunOutcome> out = Run();
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->iterations, 0);
    EXPECT_TRUE(out->stopped);
    EXPECT_EQ(backend_.runs, 1);
  }

  // A run of an hour's --duration in which SIGTERM arrives during timed
  // iteration `iter`'s collective.
  Result<RunOutcome> RunWithSigtermInIteration(int64_t iter) {
    config_.iters.reset();
    config_.duration = std::chrono::hours(1);
    backend_.on_run = [this, iter](int64_t call) {
      if (call == config_.warmup + iter) raise(SIGTERM);
      return Status::Ok();
    };
    InstallStopSignals();
    return Run();
  }

  // Every collective takes at least 2 ms, so a 1 ms duration is over after
  // the first.
  void SlowCollectives() {
    backend_.on_run = [](int64_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      return Status::Ok();
    };
  }

  Config config_;
  OneRankWorld world_;
  LoopbackBackend backend_{4096};
  std::ostringstream err_;
  std::string dir_;
};

// --lineup none: the collectives back to back, no barrier before or after
// any of them; the agreements and every record as before.
TEST_F(WorkloadRunnerTest, WithoutTheLineUpNoBarrierFramesAnIteration) {
  config_.lineup = Config::LineUp::kNone;
  Result<RunOutcome> out = RunRecorded();
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->iterations, 10);
  EXPECT_EQ(backend_.runs, 12);
  EXPECT_EQ(world_.barriers, 0);
  EXPECT_GE(world_.agreements, 2 + 1);
  int64_t expected_iter = 0;
  for (const nlohmann::json& j : ReadJsonLines(RecordsPath())) {
    EXPECT_EQ(j["iter"], expected_iter++);
    EXPECT_EQ(j["wrong"], 0);
    EXPECT_GE(j["wait_ms"].get<double>(), 0.0);
  }
  EXPECT_EQ(expected_iter, 10);
}

TEST_F(WorkloadRunnerTest, RunsWarmupThenTheTimedIterationsAndWritesOneRecordEach) {
  Result<RunOutcome> out = RunRecorded();
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->iterations, 10);
  EXPECT_FALSE(out->stopped);
  EXPECT_EQ(out->wrong, 0u);
  ASSERT_EQ(out->sizes.size(), 1u);
  EXPECT_GT(out->sizes[0].time.mean_us, 0.0);
  EXPECT_LE(out->sizes[0].time.p50_us, out->sizes[0].time.p99_us);
  EXPECT_EQ(out->sizes[0].iterations, 10);
  EXPECT_EQ(backend_.runs, 12);
  EXPECT_EQ(err_.str(), "");
  // Agreement after each warm-up and before the first timed iteration, and
  // a line-up (a barrier) before each; nothing after the last: every rank
  // counts -n itself.
  EXPECT_GE(world_.agreements, 2 + 1);
  EXPECT_EQ(world_.barriers, 2 * 10);  // a line-up and a settle each

  int64_t expected_iter = 0, last_mono = 0;
  for (const nlohmann::json& j : ReadJsonLines(RecordsPath())) {
    EXPECT_EQ(j["iter"], expected_iter++);
    EXPECT_EQ(j["rank"], 0);
    EXPECT_EQ(j["nranks"], 1);
    EXPECT_EQ(j["bytes"], 4096);
    EXPECT_EQ(j["count"], 1024);
    EXPECT_EQ(j["wrong"], 0);
    EXPECT_EQ(j["busbw_gbps"], 0.0);  // one rank moves nothing over a bus
    EXPECT_GT(j["mono_ns"].get<int64_t>(), last_mono);
    last_mono = j["mono_ns"].get<int64_t>();
  }
  EXPECT_EQ(expected_iter, 10);
}

TEST_F(WorkloadRunnerTest, CorruptAtIsCaughtCountedAndTheRunGoesOn) {
  config_.corrupt_at = 4;
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->iterations, 10);
  EXPECT_EQ(out->wrong, 1u);
  EXPECT_EQ(err_.str().rfind(
                "fdrill-collective: data check FAILED: rank 0 iter 4: 1 of 1024 elements wrong, "
                "first at index 512: got 0 expected ",
                0),
            0u)
      << err_.str();
}

TEST_F(WorkloadRunnerTest, StaleResultFromTheBackendIsCaught) {
  // Timed iteration 6 returns iteration 5's buffer, as a collective that
  // silently did nothing would.
  backend_.on_run = [&](int64_t call) {
    if (call == config_.warmup + 6) backend_.skip_copy = true;
    return Status::Ok();
  };
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_GT(out->wrong, 0u);
  EXPECT_NE(err_.str().find("rank 0 iter 6: "), std::string::npos) << err_.str();
  EXPECT_EQ(err_.str().find("iter 7"), std::string::npos) << err_.str();
}

// A stop seen after timed iteration i is agreed on in the line-up before
// i+1, so the run ends after i, and no rank runs i+1.
TEST_F(WorkloadRunnerTest, StopFileEndsTheRunAfterTheIterationThatSawIt) {
  config_.iters = 1000;
  config_.stop_file = dir_ + "/stop";
  config_.agree_every = Duration(0);  // looked for before every iteration
  backend_.on_run = [&](int64_t call) {
    if (call == config_.warmup + 3) std::ofstream(config_.stop_file) << "";
    return Status::Ok();
  };
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->iterations, 4);
  EXPECT_EQ(backend_.runs, config_.warmup + 4);
  EXPECT_TRUE(out->stopped);
  EXPECT_FALSE(world_.outstanding());
}

// Issue 25: an access() per iteration was a system call in every
// iteration of a drill's job; rank 0 looks once per agree_every.
TEST_F(WorkloadRunnerTest, StopFileIsLookedForAtMostOncePerStopFileEvery) {
  config_.stop_file = dir_ + "/stop";
  config_.agree_every = std::chrono::hours(1);
  backend_.on_run = [&](int64_t call) {
    if (call == config_.warmup + 3) std::ofstream(config_.stop_file) << "";
    return Status::Ok();
  };
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->iterations, 10);  // looked before the first only
  EXPECT_FALSE(out->stopped);
}

// Issue 25: records are written in batches, but a size's are all in the
// file when it ends, before the next size's warm-up.
TEST_F(WorkloadRunnerTest, EachSizesRecordsAreInTheFileWhenItEnds) {
  config_.sizes = {1024, 2048};
  size_t lines_at_next_size = 0;
  backend_.on_run = [&](int64_t call) {
    if (call == config_.warmup + 10) lines_at_next_size = ReadJsonLines(RecordsPath()).size();
    return Status::Ok();
  };
  auto metrics = MetricsWriter::Open(RecordsPath());
  ASSERT_TRUE(metrics.ok());
  Result<RunOutcome> out = Run(metrics->get());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(lines_at_next_size, 10u);
  EXPECT_EQ((*metrics)->waiting_bytes(), 0u);  // and the last size's, before the summary
  EXPECT_EQ(ReadJsonLines(RecordsPath()).size(), 20u);
}

// Issue 25: the line-up is a barrier, as in a latency benchmark, and the
// agreement comes before it only every agree_every: before the first
// iteration (no pace yet), before the second (the gap: at most 63 line-ups
// without one), and so on.
TEST_F(WorkloadRunnerTest, EveryLineUpIsABarrierAndTheAgreementComesEveryAgreeEvery) {
  config_.iters = 100;
  config_.agree_every = std::chrono::hours(1);
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->iterations, 100);
  EXPECT_EQ(world_.agreements, 2 + 3);  // warm-ups; iterations 0, 1 and 65
  EXPECT_EQ(world_.barriers, 2 * 100);  // a line-up and a settle each
}

TEST_F(WorkloadRunnerTest, AgreeEveryZeroAgreesBeforeEveryIteration) {
  config_.agree_every = Duration(0);
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(world_.agreements, 2 + 10);
  EXPECT_EQ(world_.barriers, 2 * 10);
}

// After the timed collective the ranks settle (a barrier) before the data
// check, so no rank checks while a peer on its core is still inside it.
TEST_F(WorkloadRunnerTest, EveryIterationSettlesBeforeTheCheck) {
  config_.agree_every = Duration(0);
  int barriers_at_run = -1;
  backend_.on_run = [&](int64_t call) {
    if (call == config_.warmup + 3) barriers_at_run = world_.barriers;
    return Status::Ok();
  };
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(barriers_at_run, 3 * 2 + 1);  // iterations 0-2 lined up and settled; 3 lined up
  EXPECT_EQ(world_.agreements, 2 + 10);
  EXPECT_EQ(world_.barriers, 2 * 10);
}

// A rank held up on its way to the settle holds its peers there: that wait
// is in wait_ms too, or a stop landing there would be in no record.
TEST_F(WorkloadRunnerTest, TheSettlesWaitIsInWaitMs) {
  world_.on_barrier = [](int n) {
    if (n % 2 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));  // the settles
  };
  Result<RunOutcome> out = RunRecorded();
  ASSERT_TRUE(out.ok());
  std::vector<nlohmann::json> records = ReadJsonLines(RecordsPath());
  ASSERT_EQ(records.size(), 10u);
  for (const nlohmann::json& j : records) {
    EXPECT_GE(j["wait_ms"].get<double>(), 3.0) << j.dump();
  }
}

// The record is stamped when the iteration is over, settle included: its
// interval (mono_ns less time_ms + wait_ms) must hold the settle's wait, or
// a link that went down while the ranks settled would read as a wait before
// the fault (seen: a 13 s leaf-down recorded as a 3 s stall).
TEST_F(WorkloadRunnerTest, TheRecordIsStampedAfterTheSettle) {
  std::vector<int64_t> settled_mono, settled_wall;
  world_.on_barrier = [&](int n) {
    if (n % 2 != 0) return;  // the line-ups
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    timespec mono{}, wall{};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_REALTIME, &wall);
    settled_mono.push_back(mono.tv_sec * 1'000'000'000LL + mono.tv_nsec);
    settled_wall.push_back(wall.tv_sec * 1'000'000'000LL + wall.tv_nsec);
  };
  Result<RunOutcome> out = RunRecorded();
  ASSERT_TRUE(out.ok());
  std::vector<nlohmann::json> records = ReadJsonLines(RecordsPath());
  ASSERT_EQ(records.size(), 10u);
  ASSERT_EQ(settled_mono.size(), 10u);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_GE(records[i]["mono_ns"].get<int64_t>(), settled_mono[i]) << records[i].dump();
    EXPECT_GE(records[i]["wall_ns"].get<int64_t>(), settled_wall[i]) << records[i].dump();
  }
}

// The gap never runs past --duration: the agreement that ends the size
// comes at the first line-up after it, not up to 63 iterations later.
TEST_F(WorkloadRunnerTest, AnAgreementComesWhenTheDurationEnds) {
  config_.iters.reset();
  config_.duration = std::chrono::milliseconds(20);
  config_.agree_every = std::chrono::hours(1);
  SlowCollectives();  // >= 2 ms each: at most 10 fit in 20 ms, then one more
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_GE(out->iterations, 1);
  EXPECT_LE(out->iterations, 11);
}

// Between agreements a stop waits for the next one: at most 63 iterations.
TEST_F(WorkloadRunnerTest, ASignalBetweenAgreementsEndsTheRunAtTheNext) {
  config_.agree_every = std::chrono::hours(1);
  Result<RunOutcome> out = RunWithSigtermInIteration(2);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->iterations, 65);  // agreements before 0, 1 and 65
  EXPECT_TRUE(out->stopped);
}

TEST_F(WorkloadRunnerTest, SignalEndsTheRunAfterTheIterationThatSawIt) {
  config_.agree_every = Duration(0);
  Result<RunOutcome> out = RunWithSigtermInIteration(2);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->iterations, 3);
  EXPECT_TRUE(out->stopped);
}

TEST_F(WorkloadRunnerTest, StopFileDuringWarmupRunsNoTimedIteration) {
  config_.stop_file = dir_ + "/stop";
  std::ofstream(config_.stop_file) << "";
  ExpectStoppedInWarmup();
}

TEST_F(WorkloadRunnerTest, StopDuringWarmupRunsNoTimedIteration) {
  backend_.on_run = [&](int64_t call) {
    if (call == 0) RequestStop();
    return Status::Ok();
  };
  ExpectStoppedInWarmup();
}

TEST_F(WorkloadRunnerTest, DurationEndsTheRun) {
  // 1 ms is over after the first collective; the line-up before the second
  // ends the size.
  config_.iters.reset();
  config_.duration = std::chrono::milliseconds(1);
  SlowCollectives();
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->iterations, 1);
  EXPECT_FALSE(out->stopped);  // it ran its course; "stopped" is a stop file or signal
}

TEST_F(WorkloadRunnerTest, BackendErrorEndsTheLoopWithWhereItHappened) {
  backend_.on_run = [&](int64_t call) {
    return call == config_.warmup + 1 ? Unavailable("MPI_Allreduce: connection reset")
                                      : Status::Ok();
  };
  Result<RunOutcome> out = Run();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "rank 0 iter 1: MPI_Allreduce: connection reset");
}

TEST_F(WorkloadRunnerTest, SweepRunsWarmupAndIterationsPerSizeWithRunWideIterations) {
  config_.sizes = {1024, 2048, 4096};
  config_.iters = 3;
  Result<RunOutcome> out = RunRecorded();
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->iterations, 9);
  ASSERT_EQ(out->sizes.size(), 3u);
  EXPECT_EQ(out->sizes[1].bytes, 2048u);
  EXPECT_EQ(out->sizes[1].iterations, 3);
  EXPECT_EQ(out->sizes[1].layout.count, 512u);
  EXPECT_EQ(backend_.runs, 3 * (2 + 3));
  ASSERT_EQ(backend_.layouts.size(), 3u);
  EXPECT_EQ(backend_.layouts[2].send_count, 1024u);
  std::vector<nlohmann::json> records = ReadJsonLines(RecordsPath());
  ASSERT_EQ(records.size(), 9u);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i]["iter"], i);
    EXPECT_EQ(records[i]["bytes"], 1024u << (i / 3));
    EXPECT_EQ(records[i]["wrong"], 0);
    EXPECT_FALSE(records[i].contains("step"));
  }
}

TEST_F(WorkloadRunnerTest, DurationEndsEachSizeNotTheRun) {
  config_.sizes = {1024, 2048};
  config_.iters.reset();
  config_.duration = std::chrono::milliseconds(1);
  SlowCollectives();
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->sizes.size(), 2u);
  EXPECT_EQ(out->sizes[0].iterations, 1);
  EXPECT_EQ(out->sizes[1].iterations, 1);
  EXPECT_FALSE(out->stopped);
  EXPECT_FALSE(world_.outstanding());
}

TEST_F(WorkloadRunnerTest, StopFileEndsTheWholeSweep) {
  config_.sizes = {1024, 2048, 4096};
  config_.iters = 100;
  config_.stop_file = dir_ + "/stop";
  config_.agree_every = Duration(0);
  backend_.on_run = [&](int64_t call) {
    if (call == config_.warmup + 100 + config_.warmup + 4) std::ofstream(config_.stop_file) << "";
    return Status::Ok();
  };
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->stopped);
  ASSERT_EQ(out->sizes.size(), 2u);
  EXPECT_EQ(out->sizes[1].iterations, 5);
  EXPECT_EQ(out->iterations, 105);
}

TEST_F(WorkloadRunnerTest, EveryOpAndDtypeChecksOutOnOneRank) {
  for (Op op : {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast, Op::kReduce,
                Op::kAllToAll, Op::kSendRecv}) {
    for (DType dtype :
         {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kFloat16, DType::kBfloat16}) {
      config_.op = op;
      config_.dtype = dtype;
      config_.redop = RedOp::kMax;
      config_.iters = 3;
      config_.corrupt_at = 1;
      err_.str("");
      Result<RunOutcome> out = Run();
      ASSERT_TRUE(out.ok()) << out.status().message();
      EXPECT_EQ(out->wrong, 1u) << OpName(op) << " " << DTypeName(dtype);
      EXPECT_NE(err_.str().find("rank 0 iter 1: 1 of "), std::string::npos) << err_.str();
    }
  }
}

}  // namespace
}  // namespace fdrill

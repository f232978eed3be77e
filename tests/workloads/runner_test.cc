// The iteration loop on one rank, without MPI: a one-rank World and a
// loopback backend (the all_reduce of a single rank is its input), whose
// Run() hook lets a test act at an exact iteration.
#include "workloads/runner.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include <optional>

#include "workloads/pattern.h"
#include "workloads/stop.h"

namespace fdrill {
namespace {

class OneRankWorld final : public World {
 public:
  explicit OneRankWorld(int size = 1) : size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  int local_rank() const override { return 0; }
  Result<int64_t> MaxInt64(int64_t value) override {
    ++agreements;
    return value;
  }
  Status StartMaxInt64(int64_t value) override {
    if (pending_) return Internal("two outstanding agreements");
    pending_ = value;
    return Status::Ok();
  }
  Result<int64_t> FinishMaxInt64() override {
    if (!pending_) return Internal("finish without start");
    ++agreements;
    int64_t v = *pending_;
    pending_.reset();
    return v;
  }
  bool outstanding() const { return pending_.has_value(); }
  Result<int64_t> SumInt64(int64_t value) override { return value; }
  Result<double> SumDouble(double value) override { return value; }
  Status Broadcast(std::span<std::byte>, int) override { return Status::Ok(); }

  int agreements = 0;

 private:
  int size_;
  std::optional<int64_t> pending_;
};

class LoopbackBackend final : public Backend {
 public:
  explicit LoopbackBackend(size_t bytes) : send_(bytes), recv_(bytes) {}
  Status SetInput(std::span<const std::byte> input) override {
    std::memcpy(send_.data(), input.data(), input.size());
    return Status::Ok();
  }
  Status Run() override {
    int64_t call = runs++;
    if (on_run) {
      Status s = on_run(call);
      if (!s.ok()) return s;
    }
    if (!skip_copy) recv_ = send_;
    skip_copy = false;
    return Status::Ok();
  }
  Status GetOutput(std::span<std::byte> output) override {
    std::memcpy(output.data(), recv_.data(), output.size());
    return Status::Ok();
  }
  Status Close() override { return Status::Ok(); }

  // Called with the 0-based index of every Run(), warm-ups included.
  std::function<Status(int64_t)> on_run;
  bool skip_copy = false;  // set from on_run: leave the previous result
  int64_t runs = 0;

 private:
  std::vector<std::byte> send_, recv_;
};

class WorkloadRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ClearStopRequest();
    config_.bytes = 4096;
    config_.warmup = 2;
    config_.iters = 10;
    std::string pattern = (std::filesystem::temp_directory_path() / "fdrill-runner-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    ClearStopRequest();
    std::filesystem::remove_all(dir_);
  }

  Result<RunOutcome> Run(MetricsWriter* metrics = nullptr) {
    return RunWorkload(config_, world_, backend_, metrics, err_);
  }

  Config config_;
  OneRankWorld world_;
  LoopbackBackend backend_{4096};
  std::ostringstream err_;
  std::string dir_;
};

TEST_F(WorkloadRunnerTest, RunsWarmupThenTheTimedIterationsAndWritesOneRecordEach) {
  std::string path = dir_ + "/r0.jsonl";
  auto metrics = MetricsWriter::Open(path);
  ASSERT_TRUE(metrics.ok());
  Result<RunOutcome> out = Run(metrics->get());
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->iterations, 10);
  EXPECT_FALSE(out->stopped);
  EXPECT_EQ(out->wrong, 0u);
  EXPECT_GT(out->median_time_us, 0.0);
  EXPECT_EQ(backend_.runs, 12);
  EXPECT_EQ(err_.str(), "");
  // Agreement after each warm-up and each timed iteration but the last.
  EXPECT_EQ(world_.agreements, 2 + 9);

  std::ifstream in(path);
  std::string line;
  int64_t expected_iter = 0, last_mono = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
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
  EXPECT_EQ(err_.str().rfind("fdrill-collective: data check FAILED: rank 0 iter 4: 1 of 1024 elements wrong, "
                             "first at index 512: got ",
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

// A stop seen after timed iteration i is agreed on during iteration i+1
// (the agreement rides alongside the collective), so the run ends after i+1.
TEST_F(WorkloadRunnerTest, StopFileEndsTheRunAfterTheNextIteration) {
  config_.iters = 1000;
  config_.stop_file = dir_ + "/stop";
  backend_.on_run = [&](int64_t call) {
    if (call == config_.warmup + 3) std::ofstream(config_.stop_file) << "";
    return Status::Ok();
  };
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->iterations, 5);
  EXPECT_TRUE(out->stopped);
  EXPECT_FALSE(world_.outstanding());
}

TEST_F(WorkloadRunnerTest, SignalEndsTheRunAfterTheNextIteration) {
  config_.iters.reset();
  config_.duration = std::chrono::hours(1);
  backend_.on_run = [&](int64_t call) {
    if (call == config_.warmup + 2) raise(SIGTERM);
    return Status::Ok();
  };
  InstallStopSignals();
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->iterations, 4);
  EXPECT_TRUE(out->stopped);
}

TEST_F(WorkloadRunnerTest, StopFileDuringWarmupRunsNoTimedIteration) {
  config_.stop_file = dir_ + "/stop";
  std::ofstream(config_.stop_file) << "";
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->iterations, 0);
  EXPECT_TRUE(out->stopped);
  EXPECT_EQ(backend_.runs, 1);
}

TEST_F(WorkloadRunnerTest, StopDuringWarmupRunsNoTimedIteration) {
  backend_.on_run = [&](int64_t call) {
    if (call == 0) RequestStop();
    return Status::Ok();
  };
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->iterations, 0);
  EXPECT_TRUE(out->stopped);
  EXPECT_EQ(backend_.runs, 1);
}

TEST_F(WorkloadRunnerTest, DurationEndsTheRun) {
  // Each collective takes at least 2 ms, so 1 ms is over after the first;
  // the agreement completes during the second.
  config_.iters.reset();
  config_.duration = std::chrono::milliseconds(1);
  backend_.on_run = [](int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return Status::Ok();
  };
  Result<RunOutcome> out = Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->iterations, 2);
  EXPECT_TRUE(out->stopped);
}

TEST_F(WorkloadRunnerTest, BackendErrorEndsTheLoopWithWhereItHappened) {
  backend_.on_run = [&](int64_t call) {
    return call == config_.warmup + 1 ? Unavailable("MPI_Allreduce: connection reset") : Status::Ok();
  };
  Result<RunOutcome> out = Run();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "rank 0 iter 1: MPI_Allreduce: connection reset");
}

TEST(WorkloadRunner, RefusesRankCountsTheCheckCannotSumExactly) {
  Config config;
  config.bytes = 4;
  config.iters = 1;
  OneRankWorld world(kMaxExactRanks + 1);
  LoopbackBackend backend(4);
  std::ostringstream err;
  Result<RunOutcome> out = RunWorkload(config, world, backend, nullptr, err);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(backend.runs, 0);
}

}  // namespace
}  // namespace fdrill

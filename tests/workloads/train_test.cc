// The training loop on one rank (fakes.h): checkpoints, resume, the digest
// and the count of redone steps. Killing a rank mid-run is the process
// test's job (collective_process_test.cc); here a stop request interrupts.
#include "workloads/train.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/json_lines.h"
#include "tests/support/scratch_dir.h"
#include "tests/workloads/fakes.h"
#include "workloads/stop.h"

namespace fdrill {
namespace {

class WorkloadTrainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ClearStopRequest();
    dir_ = MakeTempDir("fdrill-train-");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    ClearStopRequest();
    std::filesystem::remove_all(dir_);
  }

  Config TrainConfig(const std::string& sub, int64_t steps = 10) {
    Config c;
    c.op = Op::kAllReduce;
    c.dtype = DType::kFloat64;
    c.sizes = {8 * 100};
    c.warmup = 0;
    c.train = fdrill::TrainConfig{steps, 3, dir_ + "/" + sub, std::nullopt};
    return c;
  }

  // One run: start, then the loop; `stop_at_call` requests a stop there.
  Result<TrainOutcome> Train(const Config& c, std::optional<int64_t> stop_at_call = std::nullopt,
                             MetricsWriter* metrics = nullptr) {
    ClearStopRequest();
    SizeStep size{c.sizes[0], MakeLayout(c.op, c.dtype, c.sizes[0], 1).value()};
    LoopbackBackend backend(c.sizes[0]);
    backend.on_run = [&](int64_t call) {
      if (stop_at_call == call) RequestStop();
      return Status::Ok();
    };
    Result<TrainStart> start = StartTraining(c, size, world_);
    if (!start.ok()) return start.status();
    started_at_ = start->step;
    restarted_ = start->restarted;
    return RunTraining(c, size, *start, world_, backend, metrics, err_);
  }

  // The last Train() started at STEP, from a checkpoint when RESTARTED, and
  // its outcome says so.
  void ExpectStartedAt(const TrainOutcome& out, int64_t step, bool restarted) {
    EXPECT_EQ(started_at_, step);
    EXPECT_EQ(restarted_, restarted);
    EXPECT_EQ(out.first_step, step);
  }

  OneRankWorld world_;
  std::ostringstream err_;
  std::string dir_;
  int64_t started_at_ = -1;
  bool restarted_ = false;
};

TEST_F(WorkloadTrainTest, FreshRunCheckpointsEveryKSteps) {
  Config c = TrainConfig("a");
  Result<TrainOutcome> out = Train(c);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ExpectStartedAt(*out, 0, /*restarted=*/false);
  EXPECT_EQ(out->steps_run, 10);
  EXPECT_FALSE(out->stopped);
  EXPECT_EQ(out->steps_redone, 0);
  EXPECT_EQ(out->wrong, 0u);
  EXPECT_EQ(err_.str(), "");
  Result<std::optional<Checkpoint>> ckpt = ReadCheckpoint(c.train->checkpoint_dir);
  ASSERT_TRUE(ckpt.ok() && ckpt->has_value());
  EXPECT_EQ((*ckpt)->step, 9);  // after steps 0..2, 3..5, 6..8
  EXPECT_EQ((*ckpt)->nranks, 1);
  EXPECT_EQ((*ckpt)->state.size(), 100u);
  EXPECT_NE(StateDigest((*ckpt)->state), out->digest);  // one more step since
}

TEST_F(WorkloadTrainTest, InterruptedThenResumedEndsWithTheFaultFreeDigest) {
  Result<TrainOutcome> clean = Train(TrainConfig("clean"));
  ASSERT_TRUE(clean.ok());

  Config c = TrainConfig("faulty");
  // A stop requested during step 6 ends the run after step 7: steps 0..7
  // done, the last checkpoint at 6.
  Result<TrainOutcome> first = Train(c, 6);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(first->stopped);
  EXPECT_EQ(first->steps_run, 8);

  Result<TrainOutcome> second = Train(c);
  ASSERT_TRUE(second.ok()) << second.status().message();
  ExpectStartedAt(*second, 6, /*restarted=*/true);
  EXPECT_EQ(second->steps_run, 4);
  EXPECT_EQ(second->steps_redone, 2);  // 6 and 7
  EXPECT_EQ(second->digest, clean->digest);

  // Once more: nothing left past the checkpoint at 9 but step 9 itself.
  Result<TrainOutcome> third = Train(c);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->first_step, 9);
  EXPECT_EQ(third->steps_redone, 3);
  EXPECT_EQ(third->digest, clean->digest);
}

TEST_F(WorkloadTrainTest, RecordsCarryStepAndRestartedAndAppend) {
  Config c = TrainConfig("m", 4);
  const std::string path = dir_ + "/r0.jsonl";
  {
    auto metrics = MetricsWriter::Open(path, /*append=*/true);
    ASSERT_TRUE(metrics.ok());
    ASSERT_TRUE(Train(c, 0, metrics->get()).ok());  // stopped during step 0: steps 0, 1
  }
  {
    auto metrics = MetricsWriter::Open(path, /*append=*/true);
    ASSERT_TRUE(metrics.ok());
    ASSERT_TRUE(
        Train(c, std::nullopt, metrics->get()).ok());  // resumes at 0 (no checkpoint at K=3 yet)
  }
  std::vector<nlohmann::json> records = ReadJsonLines(path);
  ASSERT_EQ(records.size(), 2u + 4u);
  EXPECT_EQ(records[1]["step"], 1);
  EXPECT_EQ(records[1]["iter"], 1);
  EXPECT_EQ(records[1]["restarted"], false);
  EXPECT_EQ(records[1]["dtype"], "float64");
  EXPECT_EQ(records[2]["step"], 0);
  EXPECT_EQ(records[2]["restarted"], true);  // the progress file shows an earlier run
}

TEST_F(WorkloadTrainTest, CheckpointOfAnotherShapeIsRefused) {
  Config c = TrainConfig("shape");
  ASSERT_TRUE(PrepareCheckpointDir(c.train->checkpoint_dir).ok());
  struct Case {
    Checkpoint checkpoint;
    const char* refusal;
  };
  for (const Case& k : std::vector<Case>{
           {{3, 4, std::vector<double>(100, 1.0)},
            "the checkpoint at step 3 was written by 4 ranks, not 1"},
           {{3, 1, std::vector<double>(50, 1.0)}, "holds 50 elements, not 100 (-b 800)"},
           {{30, 1, std::vector<double>(100, 1.0)}, "is past --steps 10"}}) {
    SCOPED_TRACE(k.refusal);
    ASSERT_TRUE(WriteCheckpoint(c.train->checkpoint_dir, k.checkpoint).ok());
    Result<TrainOutcome> out = Train(c);
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find(k.refusal), std::string::npos) << out.status().message();
  }
}

TEST_F(WorkloadTrainTest, UnwritableCheckpointDirFailsBeforeAnyStep) {
  std::ofstream(dir_ + "/file") << "x";
  Config c = TrainConfig("file/sub");
  Result<TrainOutcome> out = Train(c);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(
      out.status().message().rfind("--checkpoint-dir " + dir_ + "/file/sub: cannot create it", 0),
      0u)
      << out.status().message();
}

TEST_F(WorkloadTrainTest, CorruptedStepIsCaught) {
  Config c = TrainConfig("corrupt", 5);
  c.corrupt_at = 2;
  Result<TrainOutcome> out = Train(c);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->wrong, 1u);
  EXPECT_NE(err_.str().find("data check FAILED: rank 0 iter 2: 1 of 100 elements wrong"),
            std::string::npos)
      << err_.str();
}

}  // namespace
}  // namespace fdrill

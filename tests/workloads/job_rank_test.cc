// Issue 50: what `fdrill job-rank` gives a rank of the operator's job — its
// rank from whichever launcher started it, its framework's variables — and
// the metrics record a step line becomes.
#include "workloads/job_rank.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace fdrill {
namespace {

TEST(JobRank, TheRankComesFromWhicheverLauncherStartedIt) {
  auto ompi = RankFromLauncher({{"OMPI_COMM_WORLD_RANK", "3"},
                                {"OMPI_COMM_WORLD_SIZE", "8"},
                                {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  ASSERT_TRUE(ompi.ok());
  EXPECT_EQ(ompi->rank, 3);
  EXPECT_EQ(ompi->world, 8);
  EXPECT_EQ(ompi->local_rank, 1);
  EXPECT_EQ(ompi->source, "mpirun");
  auto srun =
      RankFromLauncher({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "1"}});
  ASSERT_TRUE(srun.ok());
  EXPECT_EQ(srun->source, "srun");
  EXPECT_EQ(srun->rank, 5);
  auto torchrun = RankFromLauncher({{"RANK", "0"}, {"WORLD_SIZE", "2"}});
  ASSERT_TRUE(torchrun.ok());
  EXPECT_EQ(torchrun->source, "torchrun");
  // A rank past the size, a number that does not parse, nothing at all.
  EXPECT_FALSE(
      RankFromLauncher({{"OMPI_COMM_WORLD_RANK", "8"}, {"OMPI_COMM_WORLD_SIZE", "8"}}).ok());
  EXPECT_FALSE(RankFromLauncher({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "2"}}).ok());
  auto none = RankFromLauncher({});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("run it under mpirun, srun or torchrun"),
            std::string::npos);
}

TEST(JobRank, PytorchGetsItsRendezvousVariablesAndKeepsWhatIsSet) {
  const LaunchedRank r{2, 4, 0, "mpirun"};
  auto env = FrameworkEnv({}, r, {"pytorch", "198.18.0.1", 29500, "fab0,fab1"});
  EXPECT_EQ(env["RANK"], "2");
  EXPECT_EQ(env["WORLD_SIZE"], "4");
  EXPECT_EQ(env["LOCAL_RANK"], "0");
  EXPECT_EQ(env["MASTER_ADDR"], "198.18.0.1");
  EXPECT_EQ(env["MASTER_PORT"], "29500");
  EXPECT_EQ(env["GLOO_SOCKET_IFNAME"], "fab0,fab1");
  EXPECT_EQ(env["PYTHONUNBUFFERED"], "1");
  EXPECT_EQ(env[kJobRankEnv], "2");
  // The operator's own MASTER_PORT (or torchrun's RANK) stays.
  auto kept = FrameworkEnv({{"MASTER_PORT", "1234"}}, r, {"pytorch", "a", 29500, ""});
  EXPECT_EQ(kept.count("MASTER_PORT"), 0u);
  EXPECT_EQ(kept.count("GLOO_SOCKET_IFNAME"), 0u);
  // No framework: the marker and unbuffered output only.
  auto plain = FrameworkEnv({}, r, {"", "", 0, ""});
  EXPECT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[kJobRankEnv], "2");
}

TEST(JobRank, AStepRecordIsAMetricsRecordInStepsPerSecond) {
  StepRecord s;
  s.step = 40;
  s.time_ms = 250;
  s.timed_by_job = true;
  s.loss = 1.5;
  // A trainer that logs every 10th step: the record stands for all ten.
  const auto j = nlohmann::json::parse(
      StepMetricsLine(s, 10, {.rank = 1, .nranks = 4, .host = "n1", .wall_ns = 7, .mono_ns = 9}));
  EXPECT_EQ(j["iter"], 40);
  EXPECT_EQ(j["step"], 40);
  EXPECT_EQ(j["rank"], 1);
  EXPECT_EQ(j["op"], "step");
  EXPECT_EQ(j["count"], 10);
  EXPECT_DOUBLE_EQ(j["time_ms"].get<double>(), 2500.0);
  EXPECT_EQ(j["bytes"].get<uint64_t>(), 10 * kStepBytes);
  EXPECT_DOUBLE_EQ(j["busbw_gbps"].get<double>(), 4.0);  // 10 steps in 2.5 s
  EXPECT_DOUBLE_EQ(j["algbw_gbps"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["loss"].get<double>(), 1.5);
  EXPECT_EQ(j["restarted"], false);
  EXPECT_EQ(j["wrong"], 0);
  // bytes x bus factor (1) / time, as the report's series computes it: 4 steps/s.
  EXPECT_DOUBLE_EQ(j["bytes"].get<double>() / j["time_ms"].get<double>() / 1e6, 4.0);
}

}  // namespace
}  // namespace fdrill

namespace fdrill {
namespace {

// The opt-in file protocol ($FDRILL_METRICS): one JSON object per step.
TEST(JobRank, TheJobsOwnRecordsAreReadFromItsFile) {
  auto timed = ParseMetricsFileLine(R"({"step": 12, "time_ms": 181.5, "loss": 0.25})");
  ASSERT_TRUE(timed.has_value());
  EXPECT_EQ(timed->step, 12);
  EXPECT_DOUBLE_EQ(timed->time_ms, 181.5);
  EXPECT_TRUE(timed->timed_by_job);
  EXPECT_DOUBLE_EQ(*timed->loss, 0.25);
  auto seconds = ParseMetricsFileLine(R"({"step": 3, "time_s": 0.5, "tokens_per_s": 9000})");
  ASSERT_TRUE(seconds.has_value());
  EXPECT_DOUBLE_EQ(seconds->time_ms, 500.0);
  EXPECT_DOUBLE_EQ(*seconds->tokens_per_s, 9000.0);
  // No time: job-rank times it by the interval between records as read.
  auto untimed = ParseMetricsFileLine(R"({"step": 4})");
  ASSERT_TRUE(untimed.has_value());
  EXPECT_FALSE(untimed->timed_by_job);
  for (const char* bad :
       {"not json", "[1, 2]", R"({"time_ms": 3})", R"({"step": "4"})", R"({"step": -1})",
        R"({"step": 1.5})", R"({"step": 2, "time_ms": 0})", R"({"step": 2, "time_ms": "fast"})"}) {
    EXPECT_FALSE(ParseMetricsFileLine(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace fdrill

// The scheduler's kill against NCCL's time to error: squeue's %L as Slurm
// prints it, asked through a recording runner, and the plan line's verdicts.
#include "harness/controller/slurm_time_left.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

using std::chrono::seconds;

TEST(SlurmTimeLeft, ParsesEveryFormSqueuePrints) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"1-02:03:04", 93784}, {"2:03:04", 7384}, {"3:04", 184}, {"0:05\n", 5}, {"  59:00", 3540}};
  for (const auto& [text, want] : cases) {
    auto t = ParseSlurmTime(text);
    ASSERT_TRUE(t.ok()) << text << ": " << t.status().ToString();
    ASSERT_TRUE(t->has_value()) << text;
    EXPECT_EQ(**t, seconds(want)) << text;
  }
  auto unlimited = ParseSlurmTime("UNLIMITED\n");
  ASSERT_TRUE(unlimited.ok());
  EXPECT_FALSE(unlimited->has_value());
  for (const char* bad : {"NOT_SET", "INVALID", "", "5", "1-", "1:2:3:4", "a:00", "-1:00"}) {
    auto t = ParseSlurmTime(bad);
    EXPECT_FALSE(t.ok()) << bad;
  }
  EXPECT_NE(ParseSlurmTime("NOT_SET").status().message().find("\"NOT_SET\" is not a Slurm time"),
            std::string::npos);
}

TEST(SlurmTimeLeft, AsksSqueueForTheJobsTimeLeft) {
  FakeProcessRunner runner;
  runner.OnOutput({"squeue", "--noheader", "--jobs", "42", "--format", "%L"}, "4:30\n");
  auto left = SlurmTimeLeft(runner, "42");
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  EXPECT_EQ(**left, seconds(270));
  ASSERT_EQ(runner.calls().size(), 1u);
  EXPECT_EQ(runner.calls()[0],
            (std::vector<std::string>{"squeue", "--noheader", "--jobs", "42", "--format", "%L"}));

  FakeProcessRunner gone;
  gone.OnFail({"squeue"}, "slurm_load_jobs error: Invalid job id specified\n", 1);
  auto err = SlurmTimeLeft(gone, "42");
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.status().message().find("Invalid job id specified"), std::string::npos)
      << err.status().message();
}

NcclIbErrorTime Defaults() {
  NcclIbErrorTime t;
  t.after = std::chrono::nanoseconds(34359738368);  // 4.096 us x 2^20 x 8
  return t;
}

TEST(SlurmTimeLeft, FlagsAKillBeforeNcclsError) {
  const std::string line =
      DescribeSchedulerKill(Defaults(), "42", std::optional<Duration>(seconds(20)), seconds(10));
  EXPECT_EQ(line,
            "scheduler: Slurm job 42 is killed in 0:20 (its time limit, squeue %L), before "
            "NCCL's error after 34.4 s: a dead link ends as Slurm's kill (TIMEOUT), not as "
            "NCCL's error");
}

TEST(SlurmTimeLeft, SaysWhenTheErrorComesFirstAndWhenTheDrillOutlastsTheJob) {
  EXPECT_EQ(DescribeSchedulerKill(Defaults(), "7", std::optional<Duration>(seconds(3 * 3600)),
                                  seconds(600)),
            "scheduler: Slurm job 7 is killed in 3:00:00 (its time limit, squeue %L), after NCCL's "
            "error (34.4 s)");
  const std::string longer =
      DescribeSchedulerKill(Defaults(), "7", std::optional<Duration>(seconds(300)), seconds(900));
  EXPECT_NE(longer.find("after NCCL's error (34.4 s); the drill (at most 15:00) is longer: "
                        "Slurm ends it first"),
            std::string::npos)
      << longer;
}

TEST(SlurmTimeLeft, AHangLastsUntilTheLimitOrForever) {
  NcclIbErrorTime never;  // NCCL_IB_TIMEOUT=0: after is nullopt
  never.timeout = 0;
  EXPECT_NE(DescribeSchedulerKill(never, "7", std::optional<Duration>(seconds(3600)), seconds(60))
                .find("a hang on a dead link lasts until then, and ends as Slurm's kill"),
            std::string::npos);
  EXPECT_NE(DescribeSchedulerKill(never, "7", std::optional<Duration>(), seconds(60))
                .find("no time limit (squeue %L UNLIMITED): a hang on a dead link lasts until "
                      "someone cancels the job"),
            std::string::npos);
  EXPECT_NE(
      DescribeSchedulerKill(Defaults(), "7", Unavailable("squeue: not answering"), seconds(60))
          .find("its time left is unknown (squeue: not answering)"),
      std::string::npos);
}

}  // namespace
}  // namespace fdrill

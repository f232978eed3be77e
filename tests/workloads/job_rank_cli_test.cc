// `fdrill job-rank` as a launcher runs it: the program gets its rank
// variables, its output passes through unchanged, its step lines (or its
// own $FDRILL_METRICS records) become metrics records, and its exit status
// is the wrapper's. The programs are /bin/sh scripts, so no framework is
// needed to run this.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/host/real_process_runner.h"

namespace fdrill {
namespace {

namespace fs = std::filesystem;

class JobRankCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/fdrill-job-rank-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { fs::remove_all(dir_); }

  ProcessResult JobRank(const std::vector<std::string>& args, const std::string& script) {
    const fs::path program = dir_ / "job.sh";
    std::ofstream(program) << "#!/bin/sh\n" << script;
    fs::permissions(program, fs::perms::owner_all);
    // As mpirun starts rank 1 of 2.
    std::vector<std::string> argv = {"env",
                                     "OMPI_COMM_WORLD_RANK=1",
                                     "OMPI_COMM_WORLD_SIZE=2",
                                     "OMPI_COMM_WORLD_LOCAL_RANK=0",
                                     FDRILL_BIN,
                                     "job-rank"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", program.string()});
    RealProcessRunner runner;
    auto r = runner.Run(argv, std::chrono::seconds(30));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ProcessResult{};
  }

  std::vector<nlohmann::json> Records() {
    std::vector<nlohmann::json> out;
    std::ifstream in(dir_ / "rank-1.jsonl");
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }

  fs::path dir_;
};

TEST_F(JobRankCommand, StepLinesBecomeRecordsAndTheOutputPassesThrough) {
  const std::string line =
      " iteration {}/     100 | consumed samples: 64 | elapsed time per iteration (ms): {} | "
      "lm loss: 1.5E+00 |";
  std::string script =
      "echo \"$RANK $WORLD_SIZE $LOCAL_RANK $MASTER_ADDR:$MASTER_PORT "
      "$GLOO_SOCKET_IFNAME $PYTHONUNBUFFERED $FDRILL_JOB_RANK\"\n";
  for (auto [step, ms] : {std::pair{"10", "200.0"}, {"20", "250.0"}, {"30", "300.0"}}) {
    std::string l = line;
    l.replace(l.find("{}"), 2, step);
    l.replace(l.find("{}"), 2, ms);
    script += "echo '" + l + "'\n";
  }
  script += "echo 'a warning' >&2\nexit 3\n";
  auto r = JobRank({"--preset", "megatron", "--jsonl", (dir_ / "rank-{rank}.jsonl").string(),
                    "--framework", "pytorch", "--master-addr", "198.18.0.1", "--master-port",
                    "29500", "--socket-ifname", "fab0"},
                   script);
  EXPECT_EQ(r.exit_code, 3) << r.err;  // the program's
  EXPECT_EQ(r.out.rfind("1 2 0 198.18.0.1:29500 fab0 1 1\n iteration 10/", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("a warning\n"), std::string::npos) << r.out;  // stderr too, as printed
  const auto records = Records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0]["iter"], 10);
  EXPECT_EQ(records[0]["rank"], 1);
  EXPECT_EQ(records[0]["nranks"], 2);
  EXPECT_EQ(records[0]["count"], 1);   // the first line: how many steps before it is unknown
  EXPECT_EQ(records[1]["count"], 10);  // a line every 10 steps: it stands for all ten
  EXPECT_DOUBLE_EQ(records[1]["time_ms"].get<double>(), 2500.0);
  EXPECT_DOUBLE_EQ(records[2]["busbw_gbps"].get<double>(), 1000.0 / 300.0);
  EXPECT_EQ(records[2]["restarted"], false);
  // A relaunch appends, its records marked restarted.
  auto again =
      JobRank({"--preset", "megatron", "--jsonl", (dir_ / "rank-{rank}.jsonl").string()}, script);
  EXPECT_EQ(again.exit_code, 3);
  ASSERT_EQ(Records().size(), 6u);
  EXPECT_EQ(Records()[3]["restarted"], true);
}

TEST_F(JobRankCommand, TheJobsOwnRecordsComeFromItsMetricsFile) {
  auto r = JobRank({"--from-file", "--jsonl", (dir_ / "rank-{rank}.jsonl").string()},
                   "echo '{\"step\": 1, \"time_ms\": 40}' >> \"$FDRILL_METRICS\"\n"
                   "echo '{\"step\": 2, \"time_s\": 0.05, \"loss\": 2.5}' >> \"$FDRILL_METRICS\"\n"
                   "echo 'not a record' >> \"$FDRILL_METRICS\"\n"
                   "sleep 0.3\n"
                   "echo '{\"step\": 4, \"time_ms\": 30}' >> \"$FDRILL_METRICS\"\n"
                   "echo done\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  const auto records = Records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_DOUBLE_EQ(records[0]["time_ms"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(records[1]["time_ms"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(records[1]["loss"].get<double>(), 2.5);
  EXPECT_EQ(records[2]["iter"], 4);
  EXPECT_EQ(records[2]["count"], 2);  // steps 3 and 4
  // The job's file is not a *.jsonl: the agent streams only job-rank's.
  EXPECT_TRUE(fs::exists(dir_ / "rank-1.jsonl.job"));
}

// The emulated fabric's ranks run niced, so their node's agent keeps its
// lease deadlines on cores the ranks keep busy.
TEST_F(JobRankCommand, TheProgramRunsAtTheNicenessAsked) {
  auto r = JobRank({"--nice", "7"}, "cut -d' ' -f19 /proc/$$/stat\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "7\n");
}

TEST_F(JobRankCommand, NoLaunchersRankOrABadPresetExits2) {
  RealProcessRunner runner;
  auto bare = runner.Run({FDRILL_BIN, "job-rank", "--", "/bin/true"}, std::chrono::seconds(30));
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->exit_code, 2);
  EXPECT_NE(bare->err.find("run it under mpirun, srun or torchrun"), std::string::npos)
      << bare->err;
  auto preset = JobRank({"--preset", "megatorn", "--jsonl", (dir_ / "x.jsonl").string()}, "true\n");
  EXPECT_EQ(preset.exit_code, 2);
  EXPECT_NE(preset.err.find("did you mean \"megatron\"?"), std::string::npos) << preset.err;
}

}  // namespace
}  // namespace fdrill

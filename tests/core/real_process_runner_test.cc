// RealProcessRunner against real programs: output, exit codes, a missing
// program, the timeout. (It spawns with posix_spawnp since issue 9.)
#include "common/host/real_process_runner.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

TEST(RealProcessRunnerTest, CapturesStdoutStderrAndTheExitCode) {
  RealProcessRunner runner;
  auto r = runner.Run({"sh", "-c", "printf out; printf err >&2; exit 3"}, std::chrono::seconds(10));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out, "out");
  EXPECT_EQ(r->err, "err");
  EXPECT_EQ(r->exit_code, 3);
}

TEST(RealProcessRunnerTest, StdinIsDevNull) {
  RealProcessRunner runner;
  auto r = runner.Run({"cat"}, std::chrono::seconds(10));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out, "");
  EXPECT_EQ(r->exit_code, 0);
}

TEST(RealProcessRunnerTest, AMissingProgramIsProgramMissingNamingIt) {
  RealProcessRunner runner;
  auto r = runner.Run({"fdrill-no-such-program"}, std::chrono::seconds(10));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsProgramMissing(r.status()));
  EXPECT_EQ(r.status().message(),
            "fdrill-no-such-program is not installed: No such file or directory");
}

TEST(RealProcessRunnerTest, AMissingPathIsProgramMissingToo) {
  RealProcessRunner runner;
  auto r = runner.Run({"/nonexistent/fdrill-agent"}, std::chrono::seconds(10));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsProgramMissing(r.status())) << r.status().ToString();
}

TEST(RealProcessRunnerTest, AProgramPastItsTimeoutIsKilled) {
  RealProcessRunner runner;
  auto r = runner.Run({"sleep", "10"}, std::chrono::milliseconds(200));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace fdrill

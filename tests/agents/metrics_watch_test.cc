#include "agents/metrics_watch.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

// Issue 25: the agent pushes a rank's records when the file changes.
TEST(MetricsWatch, AWriteOrANewFileInTheDirectoryIsAnEvent) {
  const std::string dir = MakeTempDir("fdrill-watch-");
  ASSERT_FALSE(dir.empty());
  Result<MetricsWatch> watch = MetricsWatch::Open(dir);
  ASSERT_TRUE(watch.ok()) << watch.status().message();
  const int fd = watch->Release();
  EXPECT_FALSE(MetricsWatch::Drain(fd));  // nothing yet, and it does not block
  std::ofstream(dir + "/rank-0.jsonl") << "{}\n";
  EXPECT_TRUE(MetricsWatch::Drain(fd));
  EXPECT_FALSE(MetricsWatch::Drain(fd));  // drained
  std::ofstream(dir + "/rank-0.jsonl", std::ios::app) << "{}\n";
  EXPECT_TRUE(MetricsWatch::Drain(fd));
  ::close(fd);
  std::filesystem::remove_all(dir);
}

TEST(MetricsWatch, AMissingDirectoryIsNamed) {
  Result<MetricsWatch> watch = MetricsWatch::Open("/nonexistent/fdrill-run");
  ASSERT_FALSE(watch.ok());
  EXPECT_NE(watch.status().message().find("/nonexistent/fdrill-run"), std::string::npos)
      << watch.status().message();
}

}  // namespace
}  // namespace fdrill

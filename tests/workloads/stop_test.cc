#include "workloads/stop.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(WorkloadStopFileWatch, LooksFirstThenOncePerInterval) {
  std::string dir = MakeTempDir("fdrill-stop-");
  ASSERT_FALSE(dir.empty());
  StopFileWatch watch(dir + "/stop", 10 * kMs);
  EXPECT_FALSE(watch.Seen(100 * kMs));  // looked: not there
  std::ofstream(dir + "/stop") << "";
  EXPECT_FALSE(watch.Seen(100 * kMs + 1));  // not looked again yet
  EXPECT_FALSE(watch.Seen(110 * kMs - 1));
  EXPECT_TRUE(watch.Seen(110 * kMs));
  std::filesystem::remove(dir + "/stop");
  EXPECT_TRUE(watch.Seen(110 * kMs + 1));  // seen stays seen
  std::filesystem::remove_all(dir);
}

TEST(WorkloadStopFileWatch, ZeroIntervalLooksEveryTimeAndNoPathNeverStops) {
  std::string dir = MakeTempDir("fdrill-stop-");
  ASSERT_FALSE(dir.empty());
  StopFileWatch every(dir + "/stop", 0);
  EXPECT_FALSE(every.Seen(5));
  std::ofstream(dir + "/stop") << "";
  EXPECT_TRUE(every.Seen(5));
  StopFileWatch none("", 0);
  EXPECT_FALSE(none.Seen(5));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdrill

// `fdrill panic` is sticky (agents/panic_latch.h): latched until cleared,
// across restarts; a damaged latch file counts as latched.
#include "agents/panic_latch.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

TEST(PanicLatch, LatchedUntilClearedAndAcrossARestart) {
  const auto dir = ScratchPath("fdrill-latch-test-");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "panic.json").string();
  {
    PanicLatch latch(path);
    EXPECT_FALSE(latch.latched());
    ASSERT_TRUE(
        latch.Latch("CN=ops,OU=controller", "fdrill panic by root@ctl", 1764690000000000000).ok());
    EXPECT_TRUE(latch.latched());
  }
  PanicLatch restarted(path);
  ASSERT_TRUE(restarted.latched());
  Status s = restarted.Refusal("apply");
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("latched this node at 2025-12-02T15:40:00Z (by CN=ops,OU=controller: "
                             "fdrill panic by root@ctl)"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("fdrill panic --clear"), std::string::npos);
  ASSERT_TRUE(restarted.Clear().ok());
  EXPECT_FALSE(PanicLatch(path).latched());
  EXPECT_TRUE(restarted.Clear().ok());  // twice is fine

  std::ofstream(path) << "{half";
  PanicLatch damaged(path);
  EXPECT_TRUE(damaged.latched());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdrill

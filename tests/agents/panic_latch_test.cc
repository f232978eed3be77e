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
    latch.Latch("CN=ops,OU=controller", "fdrill panic by root@ctl", 1764690000000000000);
    EXPECT_TRUE(latch.latched());
    ASSERT_TRUE(latch.Save().ok());
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

// Issue 48: a latch that cannot be written holds in memory, says why, and
// is written by a later Save once it can be.
TEST(PanicLatch, ALatchThatCannotBeWrittenHoldsInMemoryAndSaysWhy) {
  const auto dir = ScratchPath("fdrill-latch-test-");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "panic.json").string();
  // WriteFileAtomically writes PATH.partial first: a directory there stops
  // it, for root too (chmod would not).
  std::filesystem::create_directories(path + ".partial");
  PanicLatch latch(path);
  latch.Latch("CN=ops,OU=controller", "disk full", 1);
  Status saved = latch.Save();
  EXPECT_FALSE(saved.ok());
  EXPECT_NE(saved.message().find("panic latch"), std::string::npos) << saved.message();
  EXPECT_TRUE(latch.latched());
  EXPECT_EQ(latch.Refusal("apply").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(latch.State()["unsaved"], saved.message());
  EXPECT_FALSE(std::filesystem::exists(path));
  std::filesystem::remove_all(path + ".partial");
  ASSERT_TRUE(latch.Save().ok());
  EXPECT_FALSE(latch.State().contains("unsaved"));
  EXPECT_TRUE(PanicLatch(path).latched());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdrill

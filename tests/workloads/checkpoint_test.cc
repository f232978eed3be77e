#include "workloads/checkpoint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

class WorkloadCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("fdrill-ckpt-");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    chmod(dir_.c_str(), 0755);
    std::filesystem::remove_all(dir_);
  }

  std::string Slurp(const std::string& name) {
    std::ifstream in(dir_ + "/" + name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string dir_;
};

TEST(WorkloadDigest, IsFnv1aOfTheStateBytes) {
  EXPECT_EQ(StateDigest({}), 0xcbf29ce484222325ull);  // the FNV-1a offset basis
  const double one = 1.0;                             // bytes 00 .. 00 f0 3f
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : {0, 0, 0, 0, 0, 0, 0xf0, 0x3f}) h = (h ^ b) * 0x100000001b3ull;
  EXPECT_EQ(StateDigest(std::span(&one, 1)), h);
  EXPECT_EQ(DigestHex(0xabc), "0000000000000abc");
  std::vector<double> a = {1, 2, 3}, b = {1, 2, 3.0000000000000004};
  EXPECT_NE(StateDigest(a), StateDigest(b));
}

TEST_F(WorkloadCheckpointTest, NoCheckpointYet) {
  Result<std::optional<Checkpoint>> c = ReadCheckpoint(dir_);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->has_value());
}

TEST_F(WorkloadCheckpointTest, WriteThenReadGivesItBackAndLeavesNoTemporary) {
  Checkpoint c{30, 4, {0.5, -1.25, 3e300, 0.0}};
  ASSERT_TRUE(WriteCheckpoint(dir_, c).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/checkpoint.tmp"));
  Result<std::optional<Checkpoint>> back = ReadCheckpoint(dir_);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ((*back)->step, 30);
  EXPECT_EQ((*back)->nranks, 4);
  EXPECT_EQ((*back)->state, c.state);
  // A later one replaces it whole.
  c.step = 40;
  c.state = {7};
  ASSERT_TRUE(WriteCheckpoint(dir_, c).ok());
  back = ReadCheckpoint(dir_);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)->step, 40);
  EXPECT_EQ((*back)->state, std::vector<double>{7});
}

TEST_F(WorkloadCheckpointTest, DamagedCheckpointIsAnErrorNotAFreshStart) {
  ASSERT_TRUE(WriteCheckpoint(dir_, Checkpoint{10, 2, {1, 2, 3, 4}}).ok());
  std::string bytes = Slurp("checkpoint");
  for (auto [what, damaged] : {std::pair<std::string, std::string>{"digest mismatch", bytes},
                               {"short state", bytes.substr(0, bytes.size() - 3)},
                               {"trailing bytes", bytes + "x"},
                               {"not an fdrill checkpoint", "hello"}}) {
    if (what == "digest mismatch") damaged[damaged.size() - 1] ^= 1;
    std::ofstream(dir_ + "/checkpoint", std::ios::binary | std::ios::trunc) << damaged;
    Result<std::optional<Checkpoint>> c = ReadCheckpoint(dir_);
    ASSERT_FALSE(c.ok()) << what;
    EXPECT_EQ(c.status().message(), "--checkpoint-dir " + dir_ + ": checkpoint is damaged (" +
                                        what + "); move it away to start from step 0");
  }
}

TEST_F(WorkloadCheckpointTest, PrepareCreatesTheDirectory) {
  const std::string nested = dir_ + "/a/b";
  EXPECT_TRUE(PrepareCheckpointDir(nested).ok());
  EXPECT_TRUE(std::filesystem::is_directory(nested));
  EXPECT_TRUE(std::filesystem::is_empty(nested));
}

TEST_F(WorkloadCheckpointTest, UnusableDirectoryNamesTheFlag) {
  std::ofstream(dir_ + "/file") << "x";
  Status s = PrepareCheckpointDir(dir_ + "/file/sub");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("--checkpoint-dir " + dir_ + "/file/sub: cannot create it: ", 0), 0u)
      << s.message();
}

TEST_F(WorkloadCheckpointTest, ReadOnlyDirectoryIsRefused) {
  // Root writes into mode-0555 directories; procfs refuses a new file even
  // to root, so root (CI) checks the same refusal there.
  std::string dir = dir_;
  if (geteuid() == 0) {
    dir = "/proc";
  } else {
    chmod(dir_.c_str(), 0555);
  }
  Status s = PrepareCheckpointDir(dir);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not writable"), std::string::npos) << s.message();
}

TEST_F(WorkloadCheckpointTest, ProgressCountsRedoneStepsAcrossRuns) {
  {
    auto first = ProgressFile::Open(dir_);
    ASSERT_TRUE(first.ok()) << first.status().message();
    EXPECT_EQ((*first)->progress().completed, 0);
    for (int64_t s = 0; s < 25; ++s) ASSERT_TRUE((*first)->StepCompleted(s).ok());
    EXPECT_EQ((*first)->progress().redone, 0);
  }
  {
    // Resumed from a checkpoint at 20, killed again after step 22.
    auto second = ProgressFile::Open(dir_);
    ASSERT_TRUE(second.ok());
    EXPECT_EQ((*second)->progress().completed, 25);
    for (int64_t s = 20; s < 23; ++s) ASSERT_TRUE((*second)->StepCompleted(s).ok());
    EXPECT_EQ((*second)->progress().redone, 3);
    EXPECT_EQ((*second)->progress().completed, 25);
  }
  auto third = ProgressFile::Open(dir_);
  ASSERT_TRUE(third.ok());
  for (int64_t s = 20; s < 40; ++s) ASSERT_TRUE((*third)->StepCompleted(s).ok());
  EXPECT_EQ((*third)->progress().redone, 3 + 5);
  EXPECT_EQ((*third)->progress().completed, 40);
  EXPECT_EQ(Slurp("progress"), "completed                   40 redone                    8\n");
}

TEST_F(WorkloadCheckpointTest, DamagedProgressIsAnError) {
  std::ofstream(dir_ + "/progress") << "garbage";
  auto p = ProgressFile::Open(dir_);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("progress is damaged"), std::string::npos);
}

}  // namespace
}  // namespace fdrill

#include "agents/journal.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace fdrill {
namespace {

// This process's scratch directory, removed when the test binary exits
// (it was left behind by every run before).
const std::filesystem::path& JournalDir() {
  static const struct Dir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("fdrill-journal-" + std::to_string(getpid()));
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } dir;
  return dir.path;
}

std::string TempPath(const char* name) {
  const auto& dir = JournalDir();
  std::filesystem::create_directories(dir);
  auto p = dir / name;
  std::filesystem::remove(p);
  return p.string();
}

TEST(Journal, PendingIsAppliedMinusReverted) {
  Journal j(TempPath("a.jsonl"));
  ASSERT_TRUE(j.Record("f1", {{"kind", "link_rate"}}).ok());
  ASSERT_TRUE(j.Record("f2", {{"kind", "link_flap"}}).ok());
  ASSERT_TRUE(j.Clear("f1").ok());
  auto p = j.Pending();
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ((*p)[0].first, "f2");
  EXPECT_EQ((*p)[0].second["kind"], "link_flap");
  ASSERT_TRUE(j.Clear("f2").ok());
  EXPECT_TRUE(j.Pending()->empty());
  // Nothing pending: the used part is zeroed, so a reader finds no record;
  // the file keeps its size (its blocks stay allocated for the next record).
  std::ifstream in(j.path(), std::ios::binary);
  EXPECT_EQ(in.get(), 0);
  EXPECT_EQ(std::filesystem::file_size(j.path()), Journal::kMinStep);
}

TEST(Journal, PrepareLeavesTheFileReadyForTheFirstRecord) {
  Journal j(TempPath("prepared.jsonl"));
  ASSERT_FALSE(std::filesystem::exists(j.path()));
  ASSERT_TRUE(j.Prepare().ok());
  EXPECT_EQ(std::filesystem::file_size(j.path()), Journal::kMinStep);
  EXPECT_TRUE(j.Pending()->empty());
  ASSERT_TRUE(j.Prepare().ok());  // twice: nothing changes
  ASSERT_TRUE(j.Record("f1", {{"kind", "link_rate"}}).ok());
  EXPECT_EQ(std::filesystem::file_size(j.path()), Journal::kMinStep);
  ASSERT_EQ(j.Pending()->size(), 1u);
  // A journal whose directory cannot exist: the error names the file.
  Journal bad(TempPath("prepared.jsonl") + "/under-a-file/journal.jsonl");
  std::ofstream(TempPath("prepared.jsonl")) << "x";
  Status s = bad.Prepare();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("under-a-file/journal.jsonl"), std::string::npos) << s.message();
}

TEST(Journal, RecordsWriteIntoTheFileWithoutGrowingItUntilItIsFull) {
  Journal j(TempPath("grow.jsonl"));
  ASSERT_TRUE(j.Record("f0", {{"kind", "link_rate"}}).ok());
  EXPECT_EQ(std::filesystem::file_size(j.path()), Journal::kMinStep);
  // Records fill the first step without changing the file's size; the one
  // that would not fit grows it by its size again (4 -> 8 KiB + the record).
  int i = 1;
  const std::string rec(100, 'r');
  for (; std::filesystem::file_size(j.path()) == Journal::kMinStep; ++i) {
    ASSERT_LT(i, 100);
    ASSERT_TRUE(j.Record("f" + std::to_string(i), {{"r", rec}}).ok());
  }
  EXPECT_GT(i, 20);  // ~140 bytes a record: ~29 fit in 4 KiB
  const auto grown = std::filesystem::file_size(j.path());
  EXPECT_GT(grown, 2 * Journal::kMinStep);
  EXPECT_LT(grown, 3 * Journal::kMinStep);
  // A record larger than the biggest step grows the file by a step past it.
  ASSERT_TRUE(j.Record("big", {{"blob", std::string(Journal::kMaxStep, 'x')}}).ok());
  EXPECT_GT(std::filesystem::file_size(j.path()), Journal::kMaxStep + grown);
  auto p = j.Pending();
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->size(), static_cast<size_t>(i) + 1);
  EXPECT_EQ(p->back().first, "big");
}

// The pending set is read once when the journal opens: a restarted agent's
// revert of the last fault it found zeroes the file as a live one would.
TEST(Journal, ARestartedAgentsLastRevertZeroesWhatItFound) {
  std::string path = TempPath("restart-last.jsonl");
  {
    Journal before(path);
    ASSERT_TRUE(before.Record("f1", Json::object()).ok());
    ASSERT_TRUE(before.Record("f2", Json::object()).ok());
  }
  Journal after(path);
  ASSERT_TRUE(after.Clear("f1").ok());
  ASSERT_EQ(after.Pending()->size(), 1u);
  ASSERT_TRUE(after.Clear("f2").ok());
  EXPECT_TRUE(after.Pending()->empty());
  std::ifstream in(path, std::ios::binary);
  EXPECT_EQ(in.get(), 0);
  // An id it never recorded changes nothing.
  ASSERT_TRUE(after.Clear("unknown").ok());
  EXPECT_TRUE(after.Pending()->empty());
}

TEST(Journal, ARestartedAgentWritesAfterTheRecordsItFinds) {
  std::string path = TempPath("restart.jsonl");
  {
    Journal before(path);
    ASSERT_TRUE(before.Record("f1", Json::object()).ok());
  }
  Journal after(path);
  ASSERT_TRUE(after.Record("f2", Json::object()).ok());
  ASSERT_TRUE(after.Clear("f1").ok());
  auto p = after.Pending();
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ((*p)[0].first, "f2");
}

// A crash mid-write in an older agent's journal (lines, no zeros): the torn
// line is not a record, and the next record does not run on from it.
TEST(Journal, TornLastLineIsIgnoredAndNotContinued) {
  std::string path = TempPath("b.jsonl");
  {
    std::ofstream out(path);
    out << R"({"op":"apply","id":"f1","record":{"kind":"link_rate"}})"
        << "\n"
        << R"({"op":"apply","id":"f2","rec)";
  }
  Journal j(path);
  auto p = j.Pending();
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ((*p)[0].first, "f1");
  ASSERT_TRUE(j.Record("f3", Json::object()).ok());
  p = j.Pending();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[1].first, "f3");
}

TEST(Journal, MissingFileMeansNothingPending) {
  Journal j(TempPath("never-written.jsonl"));
  auto p = j.Pending();
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->empty());
}

}  // namespace
}  // namespace fdrill

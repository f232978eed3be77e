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
  EXPECT_EQ(std::filesystem::file_size(j.path()), 0u);  // compacted
}

TEST(Journal, TornLastLineIsIgnored) {
  std::string path = TempPath("b.jsonl");
  Journal j(path);
  ASSERT_TRUE(j.Record("f1", {{"kind", "link_rate"}}).ok());
  {
    std::ofstream out(path, std::ios::app);
    out << R"({"op":"apply","id":"f2","rec)";
  }
  auto p = j.Pending();
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ((*p)[0].first, "f1");
}

TEST(Journal, MissingFileMeansNothingPending) {
  Journal j(TempPath("never-written.jsonl"));
  auto p = j.Pending();
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->empty());
}

}  // namespace
}  // namespace fdrill

// metrics.jsonl.zst (metrics_file.h): a run directory whose metrics are
// compressed gives the same reports as the plain one; a broken .zst is an
// error naming the file; with both forms there, the plain one is read.
#include "reports/metrics_file.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "reports/report.h"
#include "reports/run_dir.h"
#include "tests/reports/synthetic_run.h"
#include "tests/reports/zstd_text.h"

namespace fdrill {
namespace {

namespace fs = std::filesystem;
using reports_test::ReadText;
using reports_test::SyntheticRun;
using reports_test::TempDir;
using reports_test::WriteText;
using reports_test::ZstdCompress;

// RUN written into DIR with its metrics compressed (metrics.jsonl removed).
void WriteCompressed(const SyntheticRun& run, const fs::path& dir) {
  run.WriteTo(dir);
  WriteText(dir / "metrics.jsonl.zst", ZstdCompress(ReadText(dir / kMetricsFile)));
  fs::remove(dir / kMetricsFile);
}

TEST(MetricsFile, AZstdRunGivesTheSameReportsAsThePlainOne) {
  SyntheticRun run = SyntheticRun::SlowN2(25);
  run.wrong[{40, 2}] = 7;  // something for the verdict to find too
  TempDir plain, compressed;
  run.WriteTo(plain.path());
  WriteCompressed(run, compressed.path());
  ASSERT_FALSE(fs::exists(compressed.path() / kMetricsFile));
  EXPECT_EQ(MetricsFileOf(compressed.path()), compressed.path() / "metrics.jsonl.zst");

  Result<Summary> a = WriteReports(plain.path().string());
  Result<Summary> b = WriteReports(compressed.path().string());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(a->faults.size(), 1u);
  EXPECT_TRUE(a->faults[0].slowdown.has_value());
  EXPECT_FALSE(a->rollback.data_intact);
  for (const char* file : {kSummaryFile, kReportFile, kHtmlReportFile, kJunitFile}) {
    EXPECT_EQ(ReadText(plain.path() / file), ReadText(compressed.path() / file)) << file;
  }
}

TEST(MetricsFile, ACorruptOrTruncatedZstdIsAnErrorNamingTheFile) {
  TempDir dir;
  WriteCompressed(SyntheticRun::Standard(), dir.path());
  const fs::path zst = dir.path() / "metrics.jsonl.zst";
  const std::string data = ReadText(zst);

  WriteText(zst, data.substr(0, data.size() - 20));
  Result<RunData> cut = LoadRunDir(dir.path().string());
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find(zst.string() + ": truncated"), std::string::npos)
      << cut.status().ToString();

  std::string flipped = data;
  for (size_t i = 20; i < 60; ++i) flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
  WriteText(zst, flipped);
  Result<RunData> corrupt = LoadRunDir(dir.path().string());
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.status().message().find(zst.string() + ": cannot decompress"),
            std::string::npos)
      << corrupt.status().ToString();
}

TEST(MetricsFile, AMalformedLineInTheZstdIsNamedByFileAndLine) {
  TempDir dir;
  SyntheticRun run = SyntheticRun::Standard();
  std::vector<std::string> lines = run.MetricLines();
  run.WriteTo(dir.path());
  lines[2] = R"({"rank":0,"iter":"two"})";
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  WriteText(dir.path() / "metrics.jsonl.zst", ZstdCompress(text));
  fs::remove(dir.path() / kMetricsFile);
  Result<RunData> loaded = LoadRunDir(dir.path().string());
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("metrics.jsonl.zst:3: key \"iter\""), std::string::npos)
      << loaded.status().ToString();
}

TEST(MetricsFile, ThePlainFileWinsWhenBothAreThere) {
  TempDir dir;
  SyntheticRun::Standard().WriteTo(dir.path());
  WriteText(dir.path() / "metrics.jsonl.zst", "not zstd at all");  // a compression under way
  EXPECT_EQ(MetricsFileOf(dir.path()), dir.path() / kMetricsFile);
  Result<RunData> loaded = LoadRunDir(dir.path().string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_FALSE(loaded->metrics.empty());
}

TEST(MetricsFile, NeitherFormIsANote) {
  TempDir dir;
  MetricTable table;
  std::vector<std::string> notes;
  ASSERT_TRUE(ReadMetricsFile(dir.path(), &table, &notes).ok());
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(notes, std::vector<std::string>{"metrics.jsonl is absent"});
  EXPECT_TRUE(MetricsFileOf(dir.path()).empty());
}

}  // namespace
}  // namespace fdrill

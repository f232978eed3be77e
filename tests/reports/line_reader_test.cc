// LineReader (line_reader.h): the same lines from a plain file and from its
// zstd form, whatever the chunk boundaries; errors that name the file when the
// zstd data is corrupt, cut short or absent.
#include "reports/line_reader.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/reports/synthetic_run.h"
#include "tests/reports/zstd_text.h"

namespace fdrill {
namespace {

using reports_test::TempDir;
using reports_test::WriteText;

std::string CompressOrFail(const std::string& text) {
  std::string out = reports_test::ZstdCompress(text);
  EXPECT_FALSE(out.empty());
  return out;
}

// Every line of PATH, or the error.
Result<std::vector<std::string>> ReadAllLines(const std::filesystem::path& path) {
  Result<std::unique_ptr<LineReader>> reader = LineReader::Open(path);
  if (!reader.ok()) return reader.status();
  std::vector<std::string> out;
  std::string_view line;
  while (true) {
    Result<bool> more = (*reader)->Next(&line);
    if (!more.ok()) return more.status();
    if (!*more) return out;
    EXPECT_EQ((*reader)->number(), static_cast<int64_t>(out.size()) + 1);
    out.emplace_back(line);
  }
}

// Lines of every length around the 1 MiB chunk, one longer than it, a blank
// one, and a last line without '\n'.
std::string ChunkyText() {
  std::string text;
  for (int i = 0; i < 30000; ++i) text += std::string(static_cast<size_t>(i % 97), 'a') + "\n";
  text += "\n";
  text += std::string(3 << 20, 'b') + "\n";
  text += "last";
  return text;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from < text.size()) {
    size_t nl = text.find('\n', from);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(from, nl - from));
    from = nl + 1;
  }
  return out;
}

TEST(LineReader, PlainAndZstdGiveTheSameLines) {
  TempDir dir;
  const std::string text = ChunkyText();
  WriteText(dir.path() / "m.jsonl", text);
  // Two frames back to back, as `cat a.zst b.zst` makes.
  const size_t half = text.size() / 2;
  WriteText(dir.path() / "m.jsonl.zst",
            CompressOrFail(text.substr(0, half)) + CompressOrFail(text.substr(half)));
  Result<std::vector<std::string>> plain = ReadAllLines(dir.path() / "m.jsonl");
  Result<std::vector<std::string>> zstd = ReadAllLines(dir.path() / "m.jsonl.zst");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_TRUE(zstd.ok()) << zstd.status().ToString();
  const std::vector<std::string> expected = SplitLines(text);
  EXPECT_EQ(plain->size(), expected.size());
  EXPECT_TRUE(*plain == expected);
  EXPECT_TRUE(*zstd == expected);
  EXPECT_EQ(plain->back(), "last");
}

TEST(LineReader, ZeroBytesPlainIsNoLines) {
  TempDir dir;
  WriteText(dir.path() / "empty.jsonl", "");
  Result<std::vector<std::string>> lines = ReadAllLines(dir.path() / "empty.jsonl");
  ASSERT_TRUE(lines.ok());
  EXPECT_TRUE(lines->empty());
}

TEST(LineReader, CorruptZstdNamesTheFile) {
  TempDir dir;
  std::string data = CompressOrFail(ChunkyText());
  for (size_t i = data.size() / 3; i < data.size() / 3 + 64; ++i)
    data[i] = static_cast<char>(~data[i]);
  const auto path = dir.path() / "metrics.jsonl.zst";
  WriteText(path, data);
  Result<std::vector<std::string>> lines = ReadAllLines(path);
  ASSERT_FALSE(lines.ok());
  EXPECT_NE(lines.status().message().find(path.string() + ": cannot decompress"), std::string::npos)
      << lines.status().ToString();
}

TEST(LineReader, TruncatedZstdNamesTheFile) {
  TempDir dir;
  const std::string data = CompressOrFail(ChunkyText());
  const auto path = dir.path() / "metrics.jsonl.zst";
  WriteText(path, data.substr(0, data.size() / 2));
  Result<std::vector<std::string>> lines = ReadAllLines(path);
  ASSERT_FALSE(lines.ok());
  EXPECT_NE(lines.status().message().find(path.string() + ": truncated"), std::string::npos)
      << lines.status().ToString();
}

TEST(LineReader, EmptyOrMissingZstdNamesTheFile) {
  TempDir dir;
  const auto empty = dir.path() / "empty.jsonl.zst";
  WriteText(empty, "");
  Result<std::vector<std::string>> lines = ReadAllLines(empty);
  ASSERT_FALSE(lines.ok());
  EXPECT_NE(lines.status().message().find(empty.string() + ": empty"), std::string::npos);
  const auto absent = dir.path() / "absent.jsonl.zst";
  Result<std::unique_ptr<LineReader>> reader = LineReader::Open(absent);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), StatusCode::kNotFound);
  EXPECT_NE(reader.status().message().find(absent.string()), std::string::npos);
}

}  // namespace
}  // namespace fdrill

#include "workloads/metrics.h"

#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

IterationRecord Sample() {
  IterationRecord r;
  r.rank = 1;
  r.nranks = 2;
  r.host = "n1";
  r.iter = 17;
  r.op = "all_reduce";
  r.dtype = "float32";
  r.redop = "sum";
  r.bytes = 65536;
  r.count = 16384;
  r.wall_ns = 1700000000123456789;
  r.mono_ns = 987654321;
  r.time_ms = 0.5;
  r.algbw_gbps = 0.131072;
  r.busbw_gbps = 0.131072;
  r.wrong = 3;
  return r;
}

TEST(WorkloadMetrics, PathTemplate) {
  EXPECT_EQ(ExpandPathTemplate("{tmpdir}/fd/r{rank}.jsonl", 3, "/scratch", "h"),
            "/scratch/fd/r3.jsonl");
  EXPECT_EQ(ExpandPathTemplate("{rank}-{rank}", 12, "/t", "h"), "12-12");
  EXPECT_EQ(ExpandPathTemplate("plain.jsonl", 0, "/t", "h"), "plain.jsonl");
  EXPECT_EQ(ExpandPathTemplate("/tmp/fdrill-1.{host}/rank-{rank}.jsonl", 2, "/t", "gpu07"),
            "/tmp/fdrill-1.gpu07/rank-2.jsonl");
}

TEST(WorkloadMetrics, TmpDirFromEnv) {
  const char* saved = getenv("TMPDIR");
  std::string saved_value = saved != nullptr ? saved : "";
  setenv("TMPDIR", "/node0/tmp", 1);
  EXPECT_EQ(TmpDirFromEnv(), "/node0/tmp");
  setenv("TMPDIR", "", 1);
  EXPECT_EQ(TmpDirFromEnv(), "/tmp");
  unsetenv("TMPDIR");
  EXPECT_EQ(TmpDirFromEnv(), "/tmp");
  if (saved != nullptr) setenv("TMPDIR", saved_value.c_str(), 1);
}

TEST(WorkloadMetrics, RecordHasExactlyTheFormatsMdKeys) {
  std::string line = ToJsonLine(Sample());
  EXPECT_EQ(line.find('\n'), std::string::npos);
  auto j = nlohmann::ordered_json::parse(line);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"rank", "nranks", "host", "iter", "op", "dtype", "redop",
                                      "bytes", "count", "wall_ns", "mono_ns", "time_ms", "wait_ms",
                                      "algbw_gbps", "busbw_gbps", "wrong"}));
  EXPECT_EQ(j["wall_ns"].get<int64_t>(),
            1700000000123456789);  // integral, not rounded through a double
  EXPECT_EQ(j["host"], "n1");
  EXPECT_EQ(j["iter"], 17);
  EXPECT_DOUBLE_EQ(j["time_ms"].get<double>(), 0.5);
  EXPECT_EQ(j["wrong"], 3);
}

TEST(WorkloadMetrics, TrainRecordsAddStepAndRestarted) {
  IterationRecord r = Sample();
  r.step = 24;
  r.restarted = true;
  auto j = nlohmann::ordered_json::parse(ToJsonLine(r));
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys.size(), 17u);
  EXPECT_EQ(keys[15], "step");
  EXPECT_EQ(keys[16], "restarted");
  EXPECT_EQ(j["step"], 24);
  EXPECT_EQ(j["restarted"], true);
}

TEST(WorkloadMetrics, AppendKeepsTheEarlierLines) {
  std::string dir = MakeTempDir("fdrill-metrics-");
  ASSERT_FALSE(dir.empty());
  std::string path = dir + "/r0.jsonl";
  for (bool append : {false, true, true}) {
    auto writer = MetricsWriter::Open(path, append);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append(Sample()).ok());
  }
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 3);
  auto truncating = MetricsWriter::Open(path);
  ASSERT_TRUE(truncating.ok());
  truncating->reset();
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
  std::filesystem::remove_all(dir);
}

TEST(WorkloadMetrics, WriterCreatesParentsAndEachLineIsReadableAtOnce) {
  std::string dir = MakeTempDir("fdrill-metrics-");
  ASSERT_FALSE(dir.empty());
  std::string path = dir + "/a/b/r1.jsonl";
  auto writer = MetricsWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  ASSERT_TRUE((*writer)->Append(Sample()).ok());
  {
    std::ifstream in(path);  // while the writer is still open
    std::string line;
    ASSERT_TRUE(std::getline(in, line));
    EXPECT_EQ(line, ToJsonLine(Sample()));
  }
  writer->reset();
  std::filesystem::remove_all(dir);
}

size_t LinesIn(const std::string& path) {
  std::ifstream in(path);
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

// Issue 25: a write() per record cost the peers' timed collectives; lines
// now wait until a record comes kFlushEveryNs after the last write.
TEST(WorkloadMetrics, WriterBatchesTheLinesOfOneFlushInterval) {
  std::string dir = MakeTempDir("fdrill-metrics-");
  ASSERT_FALSE(dir.empty());
  std::string path = dir + "/r0.jsonl";
  auto writer = MetricsWriter::Open(path);
  ASSERT_TRUE(writer.ok());
  IterationRecord r = Sample();
  const int64_t t0 = r.mono_ns;
  ASSERT_TRUE((*writer)->Append(r).ok());  // the first goes out at once
  EXPECT_EQ(LinesIn(path), 1u);
  r.mono_ns = t0 + MetricsWriter::kFlushEveryNs - 1;
  ASSERT_TRUE((*writer)->Append(r).ok());
  ASSERT_TRUE((*writer)->Append(r).ok());
  EXPECT_EQ(LinesIn(path), 1u);
  EXPECT_GT((*writer)->waiting_bytes(), 0u);
  r.mono_ns = t0 + MetricsWriter::kFlushEveryNs;  // due: it and the two before it
  ASSERT_TRUE((*writer)->Append(r).ok());
  EXPECT_EQ(LinesIn(path), 4u);
  EXPECT_EQ((*writer)->waiting_bytes(), 0u);
  r.mono_ns += 1;
  ASSERT_TRUE((*writer)->Append(r).ok());
  EXPECT_EQ(LinesIn(path), 4u);
  ASSERT_TRUE((*writer)->Flush().ok());
  EXPECT_EQ(LinesIn(path), 5u);
  std::filesystem::remove_all(dir);
}

// A slow iteration's record is not held back: the last write was at least
// its own length ago.
TEST(WorkloadMetrics, WriterWritesARecordAtOnceAfterALongIteration) {
  std::string dir = MakeTempDir("fdrill-metrics-");
  ASSERT_FALSE(dir.empty());
  std::string path = dir + "/r0.jsonl";
  auto writer = MetricsWriter::Open(path);
  ASSERT_TRUE(writer.ok());
  IterationRecord r = Sample();
  ASSERT_TRUE((*writer)->Append(r).ok());
  r.mono_ns += 18'000'000;  // an 18 ms iteration
  ASSERT_TRUE((*writer)->Append(r).ok());
  EXPECT_EQ(LinesIn(path), 2u);
  std::filesystem::remove_all(dir);
}

TEST(WorkloadMetrics, WriterWritesWhatWaitsWhenItCloses) {
  std::string dir = MakeTempDir("fdrill-metrics-");
  ASSERT_FALSE(dir.empty());
  std::string path = dir + "/r0.jsonl";
  {
    auto writer = MetricsWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*writer)->Append(Sample()).ok());
    EXPECT_EQ(LinesIn(path), 1u);
  }
  EXPECT_EQ(LinesIn(path), 3u);
  std::filesystem::remove_all(dir);
}

// The line is written by hand now (issue 25: nlohmann's object cost ~5 us a
// record); every number must read back exactly as nlohmann wrote it.
TEST(WorkloadMetrics, JsonLineReadsBackEveryNumberExactly) {
  std::mt19937_64 random(25);
  std::uniform_real_distribution<double> mantissa(0, 1);
  std::uniform_int_distribution<int> exponent(-300, 300);
  for (int i = 0; i < 2000; ++i) {
    IterationRecord r = Sample();
    r.time_ms = mantissa(random) * std::pow(10.0, exponent(random));
    r.wait_ms = static_cast<double>(i);  // whole numbers too
    r.algbw_gbps = mantissa(random);
    r.wall_ns = static_cast<int64_t>(random());
    r.bytes = random();
    auto j = nlohmann::json::parse(ToJsonLine(r));
    ASSERT_EQ(j["time_ms"].get<double>(), r.time_ms) << ToJsonLine(r);
    ASSERT_TRUE(j["wait_ms"].is_number_float()) << ToJsonLine(r);
    ASSERT_EQ(j["wait_ms"].get<double>(), r.wait_ms);
    ASSERT_EQ(j["algbw_gbps"].get<double>(), r.algbw_gbps);
    ASSERT_EQ(j["wall_ns"].get<int64_t>(), r.wall_ns);
    ASSERT_EQ(j["bytes"].get<uint64_t>(), r.bytes);
  }
  IterationRecord r = Sample();
  r.rank = std::numeric_limits<int>::min();
  r.iter = std::numeric_limits<int64_t>::min();
  r.wrong = std::numeric_limits<uint64_t>::max();
  r.time_ms = std::numeric_limits<double>::infinity();
  r.busbw_gbps = std::nan("");
  auto j = nlohmann::json::parse(ToJsonLine(r));
  EXPECT_EQ(j["rank"].get<int>(), r.rank);
  EXPECT_EQ(j["iter"].get<int64_t>(), r.iter);
  EXPECT_EQ(j["wrong"].get<uint64_t>(), r.wrong);
  EXPECT_TRUE(j["time_ms"].is_null());  // JSON has no inf or nan; nlohmann wrote null too
  EXPECT_TRUE(j["busbw_gbps"].is_null());
}

TEST(WorkloadMetrics, JsonLineEscapesTheHostName) {
  IterationRecord r = Sample();
  r.host = "a\"b\\c\n\x01";
  EXPECT_EQ(nlohmann::json::parse(ToJsonLine(r))["host"], r.host);
  r.host = "bad\xff";  // not UTF-8: replaced, the line stays JSON
  EXPECT_EQ(nlohmann::json::parse(ToJsonLine(r))["host"], "bad\xef\xbf\xbd");
}

TEST(WorkloadMetrics, WriterNamesTheFlagWhenItCannotOpen) {
  std::string dir = MakeTempDir("fdrill-metrics-");
  ASSERT_FALSE(dir.empty());
  std::ofstream(dir + "/file") << "x";
  auto writer = MetricsWriter::Open(dir + "/file/r0.jsonl");
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().message().rfind("--jsonl " + dir + "/file/r0.jsonl: ", 0), 0u)
      << writer.status().message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdrill

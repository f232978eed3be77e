// nccl-tests output parsing: real outputs saved under data/nccl_tests (see
// its README for where each came from), then the edges a live stream has.
#include "workloads/nccl_tests_output.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace fdrill {
namespace {

std::string ReadData(const std::string& name) {
  std::ifstream in(std::string(FDRILL_NCCL_TESTS_DATA) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<NcclTestsRow> FeedAll(NcclTestsParser& p, const std::string& text) {
  auto rows = p.Feed(text);
  auto rest = p.Finish();
  rows.insert(rows.end(), rest.begin(), rest.end());
  return rows;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

// Prefixes every line (a launcher's tag).
std::string Tag(const std::string& text, const std::string& tag) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += tag + line + "\n";
  return out;
}

TEST(NcclTestsOutputTest, RecentAllReduceSweepOn16Ranks) {
  NcclTestsParser p("/opt/src/nccl-tests/build/all_reduce_perf");
  auto rows = FeedAll(p, ReadData("a3mega_h100_all_reduce_16ranks.txt"));
  EXPECT_TRUE(p.errors.empty()) << p.errors[0];
  EXPECT_TRUE(p.failures.empty());
  ASSERT_EQ(rows.size(), 31u);
  const auto& h = p.header();
  EXPECT_EQ(h.op, "all_reduce");
  EXPECT_EQ(h.ngpus, 1);
  EXPECT_EQ(h.min_bytes, 8);
  EXPECT_EQ(h.max_bytes, 8589934592);
  EXPECT_EQ(h.iters, 20);
  EXPECT_EQ(h.validation, 1);
  ASSERT_EQ(h.devices.size(), 16u);
  EXPECT_EQ(h.devices[10].rank, 10);
  EXPECT_EQ(h.devices[10].host, "ztan-mig-gq73");
  EXPECT_EQ(h.devices[10].device, 2);
  EXPECT_EQ(h.devices[10].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h.out_of_bounds, 0);
  EXPECT_DOUBLE_EQ(*h.avg_busbw_gbps, 70.742);

  const NcclTestsRow& first = rows.front();
  EXPECT_EQ(first.size_bytes, 8);
  EXPECT_EQ(first.count, 2);
  EXPECT_EQ(first.type, "float");
  EXPECT_EQ(first.redop, "sum");
  EXPECT_EQ(first.root, -1);
  EXPECT_DOUBLE_EQ(first.oop_time_us, 135.8);
  EXPECT_DOUBLE_EQ(first.ip_time_us, 123.5);
  EXPECT_EQ(first.nranks, 16);
  EXPECT_EQ(first.cycle, 0);
  EXPECT_EQ(first.line, 24);
  const NcclTestsRow& last = rows.back();
  EXPECT_EQ(last.size_bytes, 8589934592);
  EXPECT_EQ(last.count, 2147483648);
  EXPECT_DOUBLE_EQ(last.oop_time_us, 47535);
  EXPECT_DOUBLE_EQ(last.oop_algbw_gbps, 180.71);
  EXPECT_DOUBLE_EQ(last.oop_busbw_gbps, 338.82);
  EXPECT_EQ(last.oop_wrong, 0);
  EXPECT_DOUBLE_EQ(last.ip_busbw_gbps, 337.35);
  EXPECT_EQ(last.ip_wrong, 0);
  EXPECT_TRUE(last.has_oop && last.has_ip);
  EXPECT_FALSE(last.oop_max_error.has_value());
}

TEST(NcclTestsOutputTest, ByteByByteAndCrlfGiveTheSameRows) {
  const std::string text = ReadData("a3mega_h100_all_reduce_16ranks.txt");
  NcclTestsParser whole;
  auto expected = FeedAll(whole, text);
  NcclTestsParser bytes;
  std::vector<NcclTestsRow> got;
  for (char c : Replace(text, "\n", "\r\n")) {
    auto rows = bytes.Feed(std::string_view(&c, 1));
    if (c != '\n') {
      EXPECT_TRUE(rows.empty()) << "a row before its newline";
    }
    got.insert(got.end(), rows.begin(), rows.end());
  }
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].size_bytes, expected[i].size_bytes);
    EXPECT_EQ(got[i].ip_wrong, expected[i].ip_wrong);
    EXPECT_DOUBLE_EQ(got[i].ip_busbw_gbps, expected[i].ip_busbw_gbps);
    EXPECT_EQ(got[i].line, expected[i].line);
  }
  EXPECT_TRUE(bytes.errors.empty());
}

TEST(NcclTestsOutputTest, OldAlltoallWithBlankRedopAndErrorColumn) {
  NcclTestsParser p("alltoall_perf");
  auto rows = FeedAll(p, ReadData("issue78_alltoall_old_blank_redop.txt"));
  EXPECT_TRUE(p.errors.empty()) << p.errors[0];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].op, "alltoall");
  EXPECT_EQ(rows[0].size_bytes, 268435456);
  EXPECT_EQ(rows[0].count, 1048576);
  EXPECT_EQ(rows[0].type, "float");
  EXPECT_EQ(rows[0].redop, "");
  EXPECT_EQ(rows[0].root, -1);
  EXPECT_DOUBLE_EQ(rows[0].oop_time_us, 520935);
  EXPECT_DOUBLE_EQ(rows[0].oop_busbw_gbps, 0.51);
  EXPECT_EQ(rows[0].oop_max_error, 0.0);
  EXPECT_EQ(rows[0].ip_max_error, 1.0);
  EXPECT_FALSE(rows[0].oop_wrong.has_value()) << "an old 'error' column is not a count";
  EXPECT_DOUBLE_EQ(rows[1].ip_time_us, 1041299);
  EXPECT_DOUBLE_EQ(*p.header().avg_busbw_gbps, 0.507636);
}

TEST(NcclTestsOutputTest, OldBroadcastRootColumnNotApplicableAndLogLines) {
  NcclTestsParser p("broadcast_perf");
  auto rows = FeedAll(p, ReadData("issue82_broadcast_old_root_na.txt"));
  EXPECT_TRUE(p.errors.empty()) << p.errors[0];
  EXPECT_EQ(p.header().validation, 0);
  EXPECT_EQ(p.header().devices.size(), 2u);
  EXPECT_EQ(p.header().devices[1].host, "v100-gpu-5");
  EXPECT_EQ(p.header().devices[1].name, "Tesla V100-PCIE-16GB");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].root, 0);
  EXPECT_EQ(rows[0].redop, "");
  EXPECT_DOUBLE_EQ(rows[0].oop_time_us, 45.82);
  EXPECT_DOUBLE_EQ(rows[0].ip_time_us, 38.17);
  EXPECT_FALSE(rows[0].oop_max_error.has_value());
  EXPECT_FALSE(rows[0].ip_wrong.has_value());
}

TEST(NcclTestsOutputTest, FailureAfterTheHeaderIsReportedWithLineNumbers) {
  NcclTestsParser p("all_reduce_perf");
  auto rows = FeedAll(p, ReadData("issue287_rtx5090_nccl_failure.txt"));
  EXPECT_TRUE(rows.empty());
  EXPECT_TRUE(p.errors.empty()) << p.errors[0];
  ASSERT_EQ(p.failures.size(), 6u);
  EXPECT_EQ(p.failures[0],
            "line 10: GENOA-06: Test NCCL failure common.cu:392 'unhandled cuda error (run with "
            "NCCL_DEBUG=INFO for "
            "details) / '");
  EXPECT_EQ(p.failures[5], "line 15: .. GENOA-06 pid 5068: Test failure common.cu:891");
}

TEST(NcclTestsOutputTest, WrongElementsCountedAndGarbageInTheTableIsAnError) {
  NcclTestsParser p("all_reduce_perf");
  auto rows = FeedAll(p, ReadData("nccl_issue1184_wrong_elements.txt"));
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0], "line 5: not a table row: '...'");
  EXPECT_EQ(rows[2].oop_wrong, 237858);
  EXPECT_EQ(rows[2].ip_wrong, 238038);
  Json rec = ToMetricsRecord(rows[2], 7, 1700000000000000000, true);
  EXPECT_EQ(rec["wrong"], 238038);
  EXPECT_FALSE(rec.contains("data_checked"));
}

TEST(NcclTestsOutputTest, RunCyclesRepeatRowsWithTheNextCycle) {
  // -N 3: the sweep's rows again and again under one header.
  const std::string text = ReadData("a3mega_h100_all_reduce_16ranks.txt");
  const std::string head = text.substr(0, text.find("           8             2"));
  const std::string table = text.substr(head.size(), text.find("# Out of bounds") - head.size());
  NcclTestsParser p;
  auto rows = FeedAll(p, head + table + table + table);
  ASSERT_EQ(rows.size(), 93u);
  EXPECT_EQ(rows[30].cycle, 0);
  EXPECT_EQ(rows[31].cycle, 1);
  EXPECT_EQ(rows[31].size_bytes, 8);
  EXPECT_EQ(rows[92].cycle, 2);
  EXPECT_TRUE(p.errors.empty());
}

TEST(NcclTestsOutputTest, LauncherPrefixesAreStripped) {
  const std::string text = ReadData("a3mega_h100_all_reduce_16ranks.txt");
  for (const std::string tag : {"[1,0]<stdout>:", " 0: "}) {
    NcclTestsParser p;
    auto rows = FeedAll(p, Tag(text, tag));
    EXPECT_EQ(rows.size(), 31u) << tag;
    EXPECT_TRUE(p.errors.empty()) << tag;
    EXPECT_EQ(p.header().devices.size(), 16u) << tag;
  }
}

// The layouts util.cu prints with -C (cputime), -T (timestamp) and trace
// replay (out-of-place left blank: 32 spaces), which no saved sample has.
TEST(NcclTestsOutputTest, CpuTimeTimestampAndBlankOutOfPlace) {
  NcclTestsParser p("reduce_scatter_perf");
  auto rows = FeedAll(p,
                      "#       size         count      type   redop    root  cputime   algbw   "
                      "busbw  #wrong  cputime   algbw   busbw  "
                      "#wrong           timestamp\n"
                      "        1024           128     float     sum      -1    12.50    0.08    "
                      "0.07       0    12.00    0.09    0.08"
                      "       0  2025-06-02 10:15:01\n"
                      "        2048           256      half     max      -1                        "
                      "              1.2e+04  0.00    0.00"
                      "     N/A  2025-06-02 10:15:02\n");
  EXPECT_TRUE(p.errors.empty()) << p.errors[0];
  EXPECT_TRUE(p.header().cpu_time);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].ip_time_us, 12.0);
  EXPECT_EQ(rows[0].ip_wrong, 0);
  EXPECT_FALSE(rows[1].has_oop);
  EXPECT_TRUE(rows[1].has_ip);
  EXPECT_DOUBLE_EQ(rows[1].ip_time_us, 12000);
  EXPECT_FALSE(rows[1].ip_wrong.has_value());
  Json rec = ToMetricsRecord(rows[1], 1, 5, true);
  EXPECT_EQ(rec["dtype"], "float16");
  EXPECT_EQ(rec["redop"], "max");
  EXPECT_EQ(rec["data_checked"], false);
  EXPECT_EQ(rec["wrong"], 0);
}

TEST(NcclTestsOutputTest, MalformedRowsAreErrorsWithLineNumbers) {
  NcclTestsParser p;
  auto rows = FeedAll(
      p,
      "   8   2   float   sum   -1   1.0  0.0  0.0  0  1.0  0.0  0.0  0\n"  // before a header
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time"
      "   algbw   busbw #wrong\n"
      "   8   2   float   sum   -1   1.0  0.0\n"                                 // too short
      "   8   2   float   sum   -1   1.0  fast  0.0  0  1.0  0.0  0.0  0\n"      // not a number
      "   8   2   float   sum   -1   1.0  0.0  0.0  -3  1.0  0.0  0.0  0\n"      // negative count
      "   8   2   float   sum   -1   1.0  0.0  0.0  0  1.0  0.0  0.0  0  9 9\n"  // too long
      "\x01\x02 binary noise\n"
      "   8   2   float   sum   -1   1.0  0.0  0.0  0  1.0  0.0  0.0  0");  // no newline: Finish()
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].line, 8);
  ASSERT_EQ(p.errors.size(), 6u);
  EXPECT_EQ(p.errors[0].rfind("line 1: a table row before any column header", 0), 0u)
      << p.errors[0];
  EXPECT_EQ(p.errors[1], "line 3: 7 columns, the header has 13");
  EXPECT_EQ(p.errors[2], "line 4: out-of-place algbw is not a number");
  EXPECT_EQ(p.errors[3], "line 5: out-of-place #wrong is not a number");
  EXPECT_EQ(p.errors[4], "line 6: 15 columns, more than the header's 13");
  EXPECT_EQ(p.errors[5].rfind("line 7: not a table row", 0), 0u) << p.errors[5];
}

TEST(NcclTestsOutputTest, AnEndlessLineIsDroppedNotBuffered) {
  NcclTestsParser p;
  EXPECT_TRUE(p.Feed(std::string(70 * 1024, 'x')).empty());
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_NE(p.errors[0].find("without a newline"), std::string::npos);
  EXPECT_TRUE(p.Finish().empty());
}

TEST(NcclTestsOutputTest, JsonOutputFile) {
  auto rows = ParseNcclTestsJson(ReadData("synthesized_v1_all_reduce.json"), "ar.json");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  const NcclTestsRow& a = (*rows)[0];
  EXPECT_EQ(a.op, "all_reduce");
  EXPECT_EQ(a.nranks, 2);
  EXPECT_EQ(a.size_bytes, 8);
  EXPECT_EQ(a.root, -1);
  EXPECT_EQ(a.redop, "sum");
  EXPECT_DOUBLE_EQ(a.oop_time_us, 36.47);
  EXPECT_EQ(a.oop_wrong, 0);
  const NcclTestsRow& b = (*rows)[1];
  EXPECT_FALSE(b.oop_wrong.has_value());
  EXPECT_TRUE(std::isnan(b.ip_time_us));
  EXPECT_EQ(b.ip_wrong, 3);

  Json rec = ToMetricsRecord(a, 4, 1234, false);
  EXPECT_EQ(rec["source"], "nccl-tests");
  EXPECT_EQ(rec["rank"], 0);
  EXPECT_EQ(rec["nranks"], 2);
  EXPECT_EQ(rec["iter"], 4);
  EXPECT_EQ(rec["wall_ns"], 1234);
  EXPECT_EQ(rec["op"], "all_reduce");
  EXPECT_EQ(rec["dtype"], "float32");
  EXPECT_EQ(rec["bytes"], 8);
  EXPECT_EQ(rec["count"], 2);
  EXPECT_DOUBLE_EQ(rec["time_ms"].get<double>(), 0.03647);
  EXPECT_DOUBLE_EQ(rec["busbw_gbps"].get<double>(), 0.000219);
  EXPECT_EQ(rec["in_place"], false);
  EXPECT_FALSE(rec.contains("wait_ms"));
}

TEST(NcclTestsOutputTest, JsonErrorsNameTheKey) {
  auto not_json = ParseNcclTestsJson("{\"results\": [", "a.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.status().message().rfind("a.json: not JSON", 0), 0u);
  auto no_results = ParseNcclTestsJson("{\"version\":1}", "b.json");
  EXPECT_EQ(no_results.status().message(), "b.json: no \"results\" array");
  auto newer = ParseNcclTestsJson("{\"version\":2,\"results\":[]}", "c.json");
  EXPECT_EQ(newer.status().code(), StatusCode::kUnsupported);
  std::string bad = Replace(ReadData("synthesized_v1_all_reduce.json"), "\"bus_bw\":0.000449",
                            "\"bus_bw\":\"fast\"");
  auto bad_bw = ParseNcclTestsJson(bad, "d.json");
  ASSERT_FALSE(bad_bw.ok());
  EXPECT_EQ(bad_bw.status().message(), "d.json: results[1].in_place.bus_bw: expected a number");
}

}  // namespace
}  // namespace fdrill

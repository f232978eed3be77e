#include "workloads/summary.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

// The mean is what nccl-tests and latency benchmarks print as the time; a
// tail moves it and the p99, not the p50.
TEST(WorkloadSummary, MeanP50AndP99OfTheIterationTimes) {
  const TimeStats none = Summarise({});
  EXPECT_EQ(none.mean_us, 0.0);
  EXPECT_EQ(none.p99_us, 0.0);
  const TimeStats one = Summarise({5});
  EXPECT_EQ(one.mean_us, 5.0);
  EXPECT_EQ(one.p50_us, 5.0);
  EXPECT_EQ(one.p99_us, 5.0);
  EXPECT_EQ(Summarise({4, 1, 3, 100}).p50_us, 3.5);
  // 1..100: mean 50.5, p50 50.5, p99 at h = 99 * 0.99 = 98.01 -> 99.01.
  std::vector<double> ramp;
  for (int i = 1; i <= 100; ++i) ramp.push_back(i);
  const TimeStats r = Summarise(ramp);
  EXPECT_DOUBLE_EQ(r.mean_us, 50.5);
  EXPECT_DOUBLE_EQ(r.p50_us, 50.5);
  EXPECT_NEAR(r.p99_us, 99.01, 1e-9);
  // 99 iterations of 10 us and one of 1010 us: the mean 20, the p50 10.
  std::vector<double> tail(99, 10.0);
  tail.push_back(1010);
  const TimeStats t = Summarise(tail);
  EXPECT_DOUBLE_EQ(t.mean_us, 20.0);
  EXPECT_DOUBLE_EQ(t.p50_us, 10.0);
  EXPECT_NEAR(t.p99_us, 20.0, 1e-9);  // h = 98.01: 10 + 0.01 * 1000
}

TEST(WorkloadSummary, OneRowPerSizeAndTheAverageBusBandwidth) {
  SummaryTable table;
  table.nranks = 4;
  // 1 MB in a mean of 1 ms: algbw 1 GB/s, busbw 1.5 GB/s on 4 ranks; then
  // 2 and 3. The bandwidths follow the mean, not the p50.
  table.rows = {{1000000, 250000, {1000, 900, 2500}, 2}, {2000000, 500000, {1000, 990, 1200}, 0}};
  std::string text = FormatSummary(table);
  for (const char* line :
       {"# all_reduce on 4 ranks; time: mean of the timed iterations, p50 and p99 their "
        "percentiles\n",
        "#       size         count      type   redop   root       time        p50        p99   "
        "algbw   busbw  #wrong\n",
        "#        (B)    (elements)                                (us)       (us)       (us)  "
        "(GB/s)  (GB/s)        \n",
        "     1000000        250000   float32     sum     -1    1000.00     900.00    2500.00    "
        "1.00    1.50       2\n",
        "     2000000        500000   float32     sum     -1    1000.00     990.00    1200.00    "
        "2.00    3.00       0\n",
        "# Avg bus bandwidth    : 2.25\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " not in\n" << text;
  }
}

TEST(WorkloadSummary, RootAndRedopColumnsFollowTheOp) {
  SummaryTable table;
  table.op = Op::kBroadcast;
  table.dtype = DType::kBfloat16;
  table.redop = RedOp::kMax;
  table.root = 3;
  table.nranks = 8;
  table.rows = {{4096, 2048, {10, 10, 10}, 0}};
  std::string text = FormatSummary(table);
  EXPECT_NE(
      text.find("        4096          2048  bfloat16    none      3      10.00      10.00      "
                "10.00    0.41    0.41       0\n"),
      std::string::npos)
      << text;
  table.op = Op::kAllGather;
  EXPECT_NE(
      FormatSummary(table).find("  bfloat16    none     -1      10.00      10.00      10.00    "
                                "0.41    0.36"),
      std::string::npos);
}

TEST(WorkloadSummary, NoRowsAverageZero) {
  SummaryTable table;
  table.nranks = 2;
  EXPECT_NE(FormatSummary(table).find("# Avg bus bandwidth    : 0.00\n"), std::string::npos);
}

}  // namespace
}  // namespace fdrill

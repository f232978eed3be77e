#include "workloads/summary.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

TEST(WorkloadSummary, Median) {
  EXPECT_EQ(Median({}), 0.0);
  EXPECT_EQ(Median({5}), 5.0);
  EXPECT_EQ(Median({9, 1, 5}), 5.0);
  EXPECT_EQ(Median({4, 1, 3, 100}), 3.5);
}

TEST(WorkloadSummary, OneRowPerSizeAndTheAverageBusBandwidth) {
  SummaryTable table;
  table.nranks = 4;
  // 1 MB in 1 ms: algbw 1 GB/s, busbw 1.5 GB/s on 4 ranks; then 2 and 3.
  table.rows = {{1000000, 250000, 1000, 2}, {2000000, 500000, 1000, 0}};
  std::string text = FormatSummary(table);
  for (const char* line :
       {"# all_reduce on 4 ranks, median of the timed iterations\n",
        "#       size         count      type   redop   root       time   algbw   busbw  #wrong\n",
        "     1000000        250000   float32     sum     -1    1000.00    1.00    1.50       2\n",
        "     2000000        500000   float32     sum     -1    1000.00    2.00    3.00       0\n",
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
  table.rows = {{4096, 2048, 10, 0}};
  std::string text = FormatSummary(table);
  EXPECT_NE(text.find("        4096          2048  bfloat16    none      3      10.00    0.41    "
                      "0.41       0\n"),
            std::string::npos)
      << text;
  table.op = Op::kAllGather;
  EXPECT_NE(FormatSummary(table).find("  bfloat16    none     -1      10.00    0.41    0.36"),
            std::string::npos);
}

TEST(WorkloadSummary, NoRowsAverageZero) {
  SummaryTable table;
  table.nranks = 2;
  EXPECT_NE(FormatSummary(table).find("# Avg bus bandwidth    : 0.00\n"), std::string::npos);
}

}  // namespace
}  // namespace fdrill

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

TEST(WorkloadSummary, TableHasTheRowAndTheAverageBusBandwidth) {
  SummaryRow row;
  row.nranks = 4;
  row.bytes = 1000000;
  row.count = 250000;
  row.time_us = 1000;  // 1 MB in 1 ms: algbw 1 GB/s, busbw 1.5 GB/s on 4 ranks
  row.wrong = 2;
  std::string table = FormatSummary(row);
  EXPECT_NE(table.find("#       size         count      type   redop       time   algbw   busbw  #wrong\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("     1000000        250000   float32     sum    1000.00    1.00    1.50       2\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("# Avg bus bandwidth    : 1.50\n"), std::string::npos) << table;
}

}  // namespace
}  // namespace fdrill

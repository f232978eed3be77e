// MetricTable (metric_table.h): records in, the same records out; what a
// rank's records share is kept once; the names Iterations view survive a move
// of the table; its big columns sit on 2 MiB-aligned blocks.
#include "reports/metric_table.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "reports/huge_page_allocator.h"
#include "reports/series.h"

namespace fdrill {
namespace {

MetricRecord TableRecord(int rank, int64_t iter, double t) {
  return {.rank = rank,
          .nranks = 2,
          .node = "node-with-a-name-longer-than-sso-" + std::to_string(rank),
          .iter = iter,
          .op = "all_gather",
          .workload = rank == 0 ? "" : "b",
          .bytes = 1 << 20,
          .time_ms = 1.5 + rank,
          .wait_ms = 0.25,
          .algbw_gbps = 3,
          .busbw_gbps = 1.5,
          .t = t};
}

void ExpectSameAsAdded(const MetricRecord& a, const MetricRecord& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.nranks, b.nranks);
  EXPECT_EQ(a.node, b.node);
  EXPECT_EQ(a.iter, b.iter);
  EXPECT_EQ(a.attempt, b.attempt);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.time_ms, b.time_ms);
  EXPECT_EQ(a.wait_ms, b.wait_ms);
  EXPECT_EQ(a.algbw_gbps, b.algbw_gbps);
  EXPECT_EQ(a.busbw_gbps, b.busbw_gbps);
  EXPECT_EQ(a.wrong, b.wrong);
  EXPECT_EQ(a.t, b.t);
}

TEST(MetricTable, GivesBackEveryRecordAsItWasAdded) {
  std::vector<MetricRecord> in;
  for (int64_t i = 0; i < 100; ++i)
    in.push_back(TableRecord(static_cast<int>(i % 2), i / 2, i * 0.1));
  in[7].wrong = 5;
  in[8].attempt = 1;
  in[9].wrong = -2;  // counted as written, like any non-zero
  MetricTable table;
  for (const MetricRecord& m : in) table.push_back(m);
  ASSERT_EQ(table.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) ExpectSameAsAdded(table[i], in[i]);
  ASSERT_EQ(table.wrong().size(), 2u);
  EXPECT_EQ(table.wrong()[0], (std::pair<size_t, int64_t>{7, 5}));
  EXPECT_EQ(table.wrong()[1], (std::pair<size_t, int64_t>{9, -2}));
}

TEST(MetricTable, KeepsWhatARanksRecordsShareOnce) {
  MetricTable table;
  for (int64_t i = 0; i < 10; ++i) table.push_back(TableRecord(static_cast<int>(i % 2), i / 2, i));
  EXPECT_EQ(&table.source(0), &table.source(2));
  EXPECT_EQ(&table.source(1), &table.source(9));
  EXPECT_NE(&table.source(0), &table.source(1));
  MetricRecord relaunched = TableRecord(0, 0, 20);
  relaunched.attempt = 1;  // a new launch: a source of its own
  table.push_back(relaunched);
  EXPECT_NE(&table.source(10), &table.source(0));
  EXPECT_EQ(table.source(10).attempt, 1);
  // Back to the first launch's fields: its source again, though rank 0's last one changed.
  table.push_back(TableRecord(0, 6, 21));
  EXPECT_EQ(&table.source(11), &table.source(0));
}

TEST(MetricTable, RecordsOfWorkloadInFileOrder) {
  MetricTable table;
  for (int64_t i = 0; i < 6; ++i) table.push_back(TableRecord(static_cast<int>(i % 2), i / 2, i));
  EXPECT_EQ(RecordsOfWorkload(table, "b"), (std::vector<uint32_t>{1, 3, 5}));
  EXPECT_EQ(RecordsOfWorkload(table, ""), (std::vector<uint32_t>{0, 2, 4}));
  EXPECT_TRUE(RecordsOfWorkload(table, "c").empty());
}

// Iterations hold views of the table's node names: moving the table (as
// Result<RunData> does) must not move the names.
TEST(MetricTable, NamesIterationsViewSurviveAMoveOfTheTable) {
  MetricTable table;
  for (int64_t i = 0; i < 4; ++i) {
    MetricRecord m = TableRecord(static_cast<int>(i % 2), i / 2, i);
    m.node = "n" + std::to_string(m.rank);  // short: kept inside the string, where it moves
    table.push_back(m);
  }
  const std::vector<Iteration> series = BuildIterations(table);
  ASSERT_EQ(series.size(), 2u);
  ASSERT_EQ(series[0].ranks.size(), 2u);
  const char* before = series[0].ranks[1].node.data();
  MetricTable moved = std::move(table);
  for (int64_t i = 4; i < 200; ++i) moved.push_back(TableRecord(static_cast<int>(i % 7), i, i));
  EXPECT_EQ(moved.source(1).node.data(), before);
  EXPECT_EQ(series[0].ranks[1].node, "n1");
}

TEST(HugePageAllocator, BigBlocksAre2MiBAlignedAndSmallOnesOrdinary) {
  std::vector<double, HugePageAllocator<double>> big(1 << 20, 1.0);  // 8 MiB
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data()) % HugePageAllocator<double>::kHugePage, 0u);
  big.push_back(2.0);  // grows: a new block, the old one freed
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data()) % HugePageAllocator<double>::kHugePage, 0u);
  EXPECT_EQ(big.front(), 1.0);
  EXPECT_EQ(big.back(), 2.0);
  std::vector<int, HugePageAllocator<int>> small = {1, 2, 3};
  small.push_back(4);
  EXPECT_EQ(small, (std::vector<int, HugePageAllocator<int>>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace fdrill

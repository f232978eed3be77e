// RankCpu: the ranks' CPU seconds, /proc scanned only on the first sample,
// every kRescanEvery samples, when a known rank ended, and while a launched
// workload's ranks are expected; in between only the ranks' stat is read.
#include "agents/rank_cpu.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/fakes/fake_processes.h"

namespace fdrill {
namespace {

const double kHz = static_cast<double>(sysconf(_SC_CLK_TCK));

Json SampleOf(RankCpu& ranks) {
  Json out = Json::object();
  ranks.Sample(out);
  return out;
}

// Each workload rank of this node: its CPU seconds so far, by rank number;
// a process of another node's namespace or another program is not one.
TEST(RankCpuTest, EveryRankOfThisNodeWithItsCpuSeconds) {
  FakeProcessTable procs;
  procs.AddRank(100, 2).cpu_ticks = 250;
  procs.AddRank(101, 3).cpu_ticks = 1000;
  procs.AddRank(102, 0, "net:[1]").cpu_ticks = 5;
  procs.Add(103, "python3").cpu_ticks = 7;
  RankCpu ranks(procs);
  Json out = SampleOf(ranks);
  EXPECT_EQ(out.size(), 2u) << out.dump();
  EXPECT_DOUBLE_EQ(out["rank/2.cpu_seconds"].get<double>(), 250 / kHz);
  EXPECT_DOUBLE_EQ(out["rank/3.cpu_seconds"].get<double>(), 1000 / kHz);
  FakeProcessTable none;
  RankCpu no_ranks(none);
  EXPECT_TRUE(SampleOf(no_ranks).empty());
}

TEST(RankCpuTest, ASecondSampleReadsOnlyTheKnownRanksStat) {
  FakeProcessTable procs;
  procs.AddRank(100, 2).cpu_ticks = 250;
  procs.AddRank(101, 3).cpu_ticks = 1000;
  procs.Add(103, "python3");
  RankCpu ranks(procs);
  SampleOf(ranks);
  EXPECT_EQ(procs.pid_lists, 1);
  EXPECT_TRUE(procs.stats.empty());
  procs.procs[100].cpu_ticks = 400;
  Json second = SampleOf(ranks);
  EXPECT_EQ(procs.pid_lists, 1) << "the second sample listed /proc again";
  EXPECT_EQ(procs.stats, (std::vector<int>{100, 101}));
  EXPECT_DOUBLE_EQ(second["rank/2.cpu_seconds"].get<double>(), 400 / kHz);
  EXPECT_DOUBLE_EQ(second["rank/3.cpu_seconds"].get<double>(), 1000 / kHz);
}

TEST(RankCpuTest, ARankStartedLaterIsFoundOnTheRescan) {
  FakeProcessTable procs;
  procs.AddRank(100, 0);
  RankCpu ranks(procs);
  SampleOf(ranks);
  procs.AddRank(101, 1).cpu_ticks = 30;
  for (int i = 1; i < RankCpu::kRescanEvery; ++i) {
    EXPECT_FALSE(SampleOf(ranks).contains("rank/1.cpu_seconds")) << "sample " << i;
  }
  EXPECT_EQ(procs.pid_lists, 1);
  Json rescanned = SampleOf(ranks);
  EXPECT_EQ(procs.pid_lists, 2);
  EXPECT_DOUBLE_EQ(rescanned["rank/1.cpu_seconds"].get<double>(), 30 / kHz);
  EXPECT_TRUE(rescanned.contains("rank/0.cpu_seconds"));
}

TEST(RankCpuTest, AnEndedRankIsDroppedAtOnce) {
  FakeProcessTable procs;
  procs.AddRank(100, 0);
  procs.AddRank(101, 1);
  RankCpu ranks(procs);
  EXPECT_EQ(SampleOf(ranks).size(), 2u);
  procs.procs.erase(101);
  Json after = SampleOf(ranks);
  EXPECT_EQ(procs.pid_lists, 2) << "an ended rank rescans /proc in the same sample";
  EXPECT_EQ(after, (Json{{"rank/0.cpu_seconds", 0.0}}));
}

// A zombie's stat is still there; a reused pid's start time differs.
TEST(RankCpuTest, AZombieOrAReusedPidIsNotTheRankAnyMore) {
  FakeProcessTable procs;
  procs.AddRank(100, 0);
  procs.AddRank(101, 1);
  RankCpu ranks(procs);
  SampleOf(ranks);
  procs.procs[101].state = 'Z';
  EXPECT_FALSE(SampleOf(ranks).contains("rank/1.cpu_seconds"));
  EXPECT_EQ(procs.pid_lists, 2);

  procs.Add(101, "python3").start_ticks = 99999;  // the zombie reaped, its pid reused
  procs.AddRank(100, 0).start_ticks = 88888;      // rank 0 restarted under the same pid
  Json after = SampleOf(ranks);
  EXPECT_EQ(procs.pid_lists, 3);
  EXPECT_EQ(after, (Json{{"rank/0.cpu_seconds", 0.0}}));
}

TEST(RankCpuTest, AnIdleNodeIsScannedOnlyEveryKRescanEverySamples) {
  FakeProcessTable procs;
  procs.Add(103, "python3");
  RankCpu ranks(procs);
  for (int i = 0; i < 2 * RankCpu::kRescanEvery + 1; ++i) EXPECT_TRUE(SampleOf(ranks).empty());
  EXPECT_EQ(procs.pid_lists, 3);
}

TEST(RankCpuTest, ExpectedRanksAreLookedForEverySampleUntilFound) {
  FakeProcessTable procs;
  RankCpu ranks(procs);
  SampleOf(ranks);
  ranks.ExpectRanks();
  SampleOf(ranks);
  SampleOf(ranks);
  EXPECT_EQ(procs.pid_lists, 3);
  procs.AddRank(100, 0);
  EXPECT_TRUE(SampleOf(ranks).contains("rank/0.cpu_seconds"));
  EXPECT_EQ(procs.pid_lists, 4);
  SampleOf(ranks);
  EXPECT_EQ(procs.pid_lists, 4) << "found: back to reading the ranks' stat";
}

TEST(RankCpuTest, ExpectingRanksStopsAfterKRescanEverySamples) {
  FakeProcessTable procs;
  RankCpu ranks(procs);
  SampleOf(ranks);
  ranks.ExpectRanks();
  for (int i = 0; i < RankCpu::kRescanEvery; ++i) SampleOf(ranks);
  EXPECT_EQ(procs.pid_lists, 1 + RankCpu::kRescanEvery);
  for (int i = 0; i < RankCpu::kRescanEvery - 1; ++i) SampleOf(ranks);
  EXPECT_EQ(procs.pid_lists, 1 + RankCpu::kRescanEvery);
}

}  // namespace
}  // namespace fdrill

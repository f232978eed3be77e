// The pure pieces on hand-built inputs: percentiles, the iteration series,
// the baseline band and the recovery window.
#include "common/core/stats.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <gtest/gtest.h>

#include "reports/analysis.h"
#include "reports/series.h"

namespace fdrill {
namespace {

TEST(Percentile, InterpolatesBetweenClosestRanks) {
  std::vector<double> one_to_ten = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};  // order must not matter
  EXPECT_DOUBLE_EQ(*Percentile(one_to_ten, 50), 5.5);
  EXPECT_DOUBLE_EQ(*Percentile(one_to_ten, 99), 9.91);
  EXPECT_DOUBLE_EQ(*Percentile(one_to_ten, 0), 1);
  EXPECT_DOUBLE_EQ(*Percentile(one_to_ten, 100), 10);
  EXPECT_DOUBLE_EQ(*Percentile({1, 2, 3, 4}, 50), 2.5);
  EXPECT_DOUBLE_EQ(*Percentile({42}, 99), 42);
  EXPECT_FALSE(Percentile({}, 50).has_value());
}

TEST(Median, AndMedianAbsoluteDeviation) {
  EXPECT_DOUBLE_EQ(*Median({3, 1, 2}), 2);
  // median 2; deviations 1 1 0 0 2 4 7 -> median 1.
  EXPECT_DOUBLE_EQ(*MedianAbsoluteDeviation({1, 1, 2, 2, 4, 6, 9}), 1);
  EXPECT_FALSE(MedianAbsoluteDeviation({}).has_value());
}

MetricRecord Record(int rank, int64_t iter, double time_ms, double t, std::string node) {
  MetricRecord m;
  m.rank = rank;
  m.nranks = 4;
  m.node = std::move(node);
  m.iter = iter;
  m.op = "all_reduce";
  m.bytes = 400'000'000;
  m.time_ms = time_ms;
  m.t = t;
  return m;
}

MetricTable TableOf(const std::vector<MetricRecord>& records) {
  MetricTable table;
  for (const MetricRecord& r : records) table.push_back(r);
  return table;
}

TEST(BuildIterations, TakesTheSlowestRankAndRecomputesBusbw) {
  const MetricTable metrics = TableOf({
      Record(1, 0, 60, 1.060, "n1"),
      Record(0, 0, 59, 1.058, "n0"),
      Record(0, 1, 50, 1.110, "n0"),
      Record(1, 1, 120, 1.180, "n1"),
  });
  std::vector<Iteration> series = BuildIterations(metrics);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].iter, 0);
  EXPECT_DOUBLE_EQ(series[0].time_ms, 60);
  EXPECT_DOUBLE_EQ(series[0].end_s, 1.060);
  EXPECT_NEAR(series[0].start_s, 1.000, 1e-12);
  // No busbw/algbw in the records: all_reduce on 4 ranks, factor 1.5.
  EXPECT_NEAR(series[0].busbw_gbps, 10.0, 1e-9);
  EXPECT_DOUBLE_EQ(series[1].time_ms, 120);
  EXPECT_NEAR(series[1].busbw_gbps, 5.0, 1e-9);
  ASSERT_EQ(series[1].ranks.size(), 2u);
  EXPECT_EQ(series[1].ranks[1].node, "n1");
}

// A paused rank makes its peers wait in the line-up, not in the timed
// collective: the iteration's time is the largest wait + collective.
TEST(BuildIterations, AStragglersDelayIsItsPeersWait) {
  MetricRecord fast = Record(0, 0, 10, 4.0, "n0");
  fast.wait_ms = 3000;
  MetricRecord straggler = Record(1, 0, 10, 4.0, "n1");
  straggler.wait_ms = 0.1;
  const MetricTable metrics = TableOf({fast, straggler});
  std::vector<Iteration> series = BuildIterations(metrics);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_DOUBLE_EQ(series[0].time_ms, 3010);
  EXPECT_NEAR(series[0].start_s, 4.0 - 3.010, 1e-12);
  EXPECT_NEAR(series[0].busbw_gbps, 400e6 * 1.5 / 3010 / 1e6, 1e-9);
}

TEST(BuildIterations, PrefersTheRecordsOwnBusFactor) {
  MetricRecord m = Record(0, 0, 100, 1.0, "n0");
  m.algbw_gbps = 4.0;
  m.busbw_gbps = 3.0;  // factor 0.75, as an all_gather on 4 ranks states it
  const MetricTable metrics = TableOf({m});
  std::vector<Iteration> series = BuildIterations(metrics);
  EXPECT_NEAR(series[0].busbw_gbps, 400e6 * 0.75 / 100 / 1e6, 1e-9);
  EXPECT_DOUBLE_EQ(OpBusFactor("all_reduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(OpBusFactor("all_gather", 4), 0.75);
  EXPECT_DOUBLE_EQ(OpBusFactor("broadcast", 4), 1.0);
}

// Records out of order, a relaunch repeating steps 1 and 2 (attempt 1), and a
// subset of the rows: iterations come in (attempt, iter) order, each from its
// own records only.
TEST(BuildIterations, OrdersByAttemptThenIterAndReadsOnlyTheRowsGiven) {
  MetricRecord relaunched = Record(0, 1, 30, 9.0, "n0");
  relaunched.attempt = 1;
  MetricRecord relaunched2 = Record(0, 2, 40, 9.1, "n0");
  relaunched2.attempt = 1;
  const MetricTable metrics = TableOf({
      Record(0, 2, 20, 2.0, "n0"),
      relaunched2,
      Record(0, 1, 10, 1.0, "n0"),
      relaunched,
      Record(1, 1, 15, 1.0, "n1"),
  });
  std::vector<Iteration> all = BuildIterations(metrics);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(std::pair(all[0].attempt, all[0].iter), std::pair(0, int64_t{1}));
  EXPECT_DOUBLE_EQ(all[0].time_ms, 15);  // ranks 0 and 1
  EXPECT_EQ(all[0].ranks.size(), 2u);
  EXPECT_EQ(std::pair(all[1].attempt, all[1].iter), std::pair(0, int64_t{2}));
  EXPECT_EQ(std::pair(all[2].attempt, all[2].iter), std::pair(1, int64_t{1}));
  EXPECT_DOUBLE_EQ(all[2].time_ms, 30);
  EXPECT_EQ(std::pair(all[3].attempt, all[3].iter), std::pair(1, int64_t{2}));

  const std::vector<uint32_t> rank0_of_attempt0 = {0, 2};
  std::vector<Iteration> some = BuildIterations(metrics, rank0_of_attempt0);
  ASSERT_EQ(some.size(), 2u);
  EXPECT_DOUBLE_EQ(some[0].time_ms, 10);  // rank 1's 15 ms is not among the rows
  EXPECT_EQ(some[0].ranks.size(), 1u);
  EXPECT_DOUBLE_EQ(some[1].time_ms, 20);
}

// Percentile picks its two closest ranks without a full sort: the same
// answer as sorting, on data with ties, at every p.
TEST(Percentile, EqualsTheSortedDefinitionOnRandomDataWithTies) {
  std::vector<double> values;
  uint32_t x = 12345;
  for (int i = 0; i < 1001; ++i) {
    x = x * 1103515245 + 12345;
    values.push_back(static_cast<double>((x >> 16) % 97));  // many ties
  }
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (double p : {0.0, 0.1, 1.0, 25.0, 50.0, 50.05, 90.0, 99.0, 99.9, 100.0}) {
    const double h = (static_cast<double>(sorted.size()) - 1) * p / 100;
    const size_t lo = static_cast<size_t>(std::floor(h));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double expected = sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
    EXPECT_DOUBLE_EQ(*Percentile(values, p), expected) << "p" << p;
  }
  values.resize(2);
  EXPECT_DOUBLE_EQ(*Percentile(values, 100), std::max(values[0], values[1]));
}

std::vector<Iteration> SeriesOf(const std::vector<double>& busbw, double iter_s = 0.1) {
  std::vector<Iteration> series;
  for (size_t i = 0; i < busbw.size(); ++i) {
    Iteration it;
    it.iter = static_cast<int64_t>(i);
    it.start_s = static_cast<double>(i) * iter_s;
    it.end_s = it.start_s + iter_s;
    it.time_ms = iter_s * 1000;
    it.busbw_gbps = busbw[i];
    series.push_back(it);
  }
  return series;
}

TEST(ComputeBaseline, BandIsTheWiderOfKMadsAndTheFloor) {
  std::vector<PhaseStats> phases = {{.name = "warmup", .start_s = 0, .end_s = 0.55},
                                    {.name = "baseline", .start_s = 0.55, .end_s = 1.05}};
  // Iterations ending in [0.55, 1.05): busbw 8 9 10 11 12 -> median 10, MAD 1.
  std::vector<Iteration> series = SeriesOf({1, 1, 1, 1, 1, 8, 9, 10, 11, 12, 1});
  Baseline b = ComputeBaseline(phases, series, std::nullopt, {.band_cap_fraction = 1.0});
  EXPECT_EQ(b.phase, "baseline");
  EXPECT_EQ(b.count, 5);
  EXPECT_DOUBLE_EQ(*b.busbw_median, 10);
  EXPECT_DOUBLE_EQ(*b.mad, 1);
  EXPECT_NEAR(*b.band_low, 10 - 4 * 1.4826, 1e-9);
  b = ComputeBaseline(phases, series, std::nullopt, {});
  EXPECT_NEAR(*b.band_low, 5.0, 1e-9);  // 4 × 1.4826 = 5.93 is past the 50 % cap
  b = ComputeBaseline(phases, series, std::nullopt, {.band_k = 0.5});
  EXPECT_NEAR(*b.band_low, 9.0, 1e-9);  // 0.5 × 1.4826 < the 10 % floor
  b = ComputeBaseline(phases, series, std::nullopt, {.band_k = 0.5, .band_floor_fraction = 0.3});
  EXPECT_NEAR(*b.band_low, 7.0, 1e-9);
}

// Regression (seen in a quickstart drill on a loaded machine: MAD 26 % of the
// median put band_low below zero, so impact was never seen).
TEST(ComputeBaseline, ANoisyBaselineCannotPushTheBandBelowHalfTheMedian) {
  std::vector<PhaseStats> phases = {{.name = "baseline", .start_s = 0, .end_s = 1.05}};
  // busbw 4 7 10 13 16 -> median 10, MAD 3: 4 x 1.4826 x 3 = 17.8 > median.
  std::vector<Iteration> series = SeriesOf({4, 7, 10, 13, 16});
  Baseline b = ComputeBaseline(phases, series, std::nullopt, {});
  EXPECT_DOUBLE_EQ(*b.mad, 3);
  EXPECT_NEAR(*b.band_low, 5.0, 1e-9);
  b = ComputeBaseline(phases, series, std::nullopt, {.band_cap_fraction = 0.8});
  EXPECT_NEAR(*b.band_low, 2.0, 1e-9);
}

TEST(ComputeBaseline, WithoutPhasesUsesWhatCameBeforeTheFirstFault) {
  std::vector<Iteration> series = SeriesOf({10, 10, 10, 2, 2, 2, 2});
  Baseline b = ComputeBaseline({}, series, 0.3, {});
  EXPECT_EQ(b.count, 2);  // ends 0.1 and 0.2; 0.3 is not before 0.3
  EXPECT_DOUBLE_EQ(*b.busbw_median, 10);
  EXPECT_DOUBLE_EQ(*b.band_low, 9);
  EXPECT_FALSE(ComputeBaseline({}, {}, std::nullopt, {}).busbw_median.has_value());
}

Event PhaseEvent(double t, const char* type, const char* phase) {
  Event e;
  e.t = t;
  e.type = type;
  e.phase = phase;
  return e;
}

TEST(AnalyzePhases, StatisticsOfTheIterationsEndingInEachPhase) {
  // Ends at 0.1 .. 1.0; busbw 1..10; times 100 ms except one 500 ms outlier.
  std::vector<Iteration> series = SeriesOf({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  series[3].time_ms = 500;
  std::vector<Event> events = {PhaseEvent(0.05, "phase_start", "baseline"),
                               PhaseEvent(0.45, "phase_end", "baseline"),
                               PhaseEvent(0.45, "phase_start", "tail"),
                               PhaseEvent(0.5, "phase_end", "nothing-started-this")};
  std::vector<PhaseStats> phases = AnalyzePhases(events, series, 2.0);
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].count, 4);  // ends 0.1 0.2 0.3 0.4
  EXPECT_DOUBLE_EQ(*phases[0].busbw_gbps_p50, 2.5);
  EXPECT_DOUBLE_EQ(*phases[0].iter_ms_p50, 100);
  EXPECT_NEAR(*phases[0].iter_ms_p99, 100 + 0.97 * 400, 1e-9);
  EXPECT_EQ(phases[1].name, "tail");
  EXPECT_DOUBLE_EQ(phases[1].end_s, 2.0);  // never ended: runs to the end of the run
  EXPECT_EQ(phases[1].count, 6);
  EXPECT_DOUBLE_EQ(*phases[1].busbw_gbps_p50, 7.5);
  EXPECT_FALSE(AnalyzePhases(events, {}, 2.0)[0].busbw_gbps_p50.has_value());
}

TEST(TimeToRecover, NeedsWConsecutiveGoodIterationsAfterTheRevert) {
  //                                  0  1  2  3  4  5  6  7  8  9 10 11 12
  std::vector<Iteration> series = SeriesOf({1, 1, 1, 9, 9, 9, 9, 1, 9, 9, 9, 9, 9});
  // Reverted at 0.15: iteration 1 starts before it; a run of four goods (3..6)
  // is one short of W=5; 8..12 is the window.
  auto ttr = TimeToRecover(series, 0.15, 5, 5, 1e9);
  ASSERT_TRUE(ttr.has_value());
  EXPECT_NEAR(*ttr, 0.8 - 0.15, 1e-9);
  EXPECT_NEAR(*TimeToRecover(series, 0.15, 5, 4, 1e9), 0.3 - 0.15, 1e-9);
  // The data (or the next fault) ends before a window is complete.
  EXPECT_FALSE(TimeToRecover(series, 0.15, 5, 5, 1.25).has_value());
  EXPECT_FALSE(TimeToRecover(series, 0.15, 5, 6, 1e9).has_value());
}

}  // namespace
}  // namespace fdrill

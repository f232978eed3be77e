#include "harness/controller/live_monitor.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

using std::chrono::milliseconds;

// One iteration on every rank: ends at end_ms, each rank time_ms, 1 MB.
void Iter(LiveMonitor* m, int64_t iter, int64_t end_ms, double time_ms, int ranks = 2,
          int64_t wrong = 0) {
  for (int r = 0; r < ranks; ++r) {
    LiveSample s;
    s.iter = iter;
    s.rank = r;
    s.end = milliseconds(end_ms);
    s.time_ms = time_ms;
    s.wait_ms = r == 0 ? 0.5 : 0;  // rank 0 waited: the iteration is the largest wait + time
    s.bytes = 1e6;
    s.bus_factor = 1;
    s.wrong = r == 0 ? wrong : 0;
    m->Add(s);
  }
}

TEST(LiveMonitor, AnIterationCompletesWhenEveryRankReported) {
  LiveMonitor m(2, {}, 3);
  LiveSample s{.iter = 0,
               .rank = 0,
               .end = milliseconds(10),
               .time_ms = 1.5,
               .wait_ms = 0,
               .bytes = 1e6,
               .bus_factor = 1,
               .wrong = 0};
  m.Add(s);
  EXPECT_EQ(m.complete(), 0);
  s.rank = 1;
  m.Add(s);
  EXPECT_EQ(m.complete(), 1);
}

TEST(LiveMonitor, StableOnlyWhenTheLastWindowIsInTheBand) {
  LiveMonitor m(2, {}, 3);
  for (int i = 0; i < 20; ++i) Iter(&m, i, 10 * i, 0.5);  // 1.0 ms with the wait: 1 GB/s
  EXPECT_FALSE(m.StableSince().has_value());              // no band yet
  m.EndBaseline();
  ASSERT_TRUE(m.band_low().has_value());
  EXPECT_NEAR(*m.band_low(), 0.9, 1e-9);  // the 10 % floor of a noiseless baseline
  EXPECT_TRUE(m.StableSince().has_value());
  Iter(&m, 20, 300, 9.5);  // 10 ms: 0.1 GB/s, out of the band
  EXPECT_FALSE(m.StableSince().has_value());
  Iter(&m, 21, 310, 0.5);
  Iter(&m, 22, 320, 0.5);
  EXPECT_FALSE(m.StableSince().has_value());
  Iter(&m, 23, 330, 0.5);
  ASSERT_TRUE(m.StableSince().has_value());
  EXPECT_EQ(*m.StableSince(), milliseconds(309));  // the window's first start: 310 - 1 ms
}

TEST(LiveMonitor, TheLatestIterationBelowTheBandIsTheLiveImpactSignal) {
  LiveMonitor m(2, {}, 3);
  for (int i = 0; i < 20; ++i) Iter(&m, i, 10 * i, 0.5);
  EXPECT_FALSE(m.last_below_band_end().has_value());
  m.EndBaseline();
  Iter(&m, 20, 300, 0.5);
  EXPECT_FALSE(m.last_below_band_end().has_value());  // in the band
  Iter(&m, 21, 320, 9.5);                             // 0.1 GB/s
  ASSERT_TRUE(m.last_below_band_end().has_value());
  EXPECT_EQ(*m.last_below_band_end(), milliseconds(320));
  Iter(&m, 22, 330, 0.5);
  EXPECT_EQ(*m.last_below_band_end(), milliseconds(320));  // stays: the latest below
}

TEST(LiveMonitor, ASlowIterationShowsBeforeItEnds) {
  LiveMonitor m(2, {}, 3);
  for (int i = 0; i < 20; ++i) Iter(&m, i, 10 * i, 0.5);  // 1 ms at 1 GB/s; ends at 190 ms
  EXPECT_FALSE(m.SlowInProgress(milliseconds(5000), milliseconds(190)));  // no band yet
  EXPECT_FALSE(m.SlowAt(milliseconds(190)).has_value());
  m.EndBaseline();  // band low 0.9 GB/s: an in-band iteration takes at most 1.11 ms,
                    // and 9 ms pass between one iteration's end and the next's start
  // A fault at 200 ms: nothing completes after it.
  const Duration gap = milliseconds(9);
  EXPECT_FALSE(
      m.SlowInProgress(milliseconds(200) + gap + LiveMonitor::kPushSlack, milliseconds(200)));
  EXPECT_TRUE(
      m.SlowInProgress(milliseconds(202) + gap + LiveMonitor::kPushSlack, milliseconds(200)));
  // An iteration completes at 250: silence counts from there.
  Iter(&m, 20, 250, 0.5);
  EXPECT_FALSE(
      m.SlowInProgress(milliseconds(251) + gap + LiveMonitor::kPushSlack, milliseconds(200)));
}

// Issue 25: the controller wakes at SlowAt instead of polling every 20 ms;
// SlowInProgress holds right after it, not at it.
TEST(LiveMonitor, SlowAtIsWhenSlowInProgressTurnsTrue) {
  LiveMonitor m(2, {}, 3);
  for (int i = 0; i < 20; ++i) Iter(&m, i, i, 0.5);  // back to back: no gap
  m.EndBaseline();
  const auto at = m.SlowAt(milliseconds(100));
  ASSERT_TRUE(at.has_value());
  // 1 MB at the band's 0.9 GB/s: 1.111 ms, then the slack.
  using Ms = std::chrono::duration<double, std::milli>;
  const double expected_ms = 100 + 1e6 / 0.9e9 * 1e3 + Ms(LiveMonitor::kPushSlack).count();
  EXPECT_NEAR(Ms(*at).count(), expected_ms, 0.001);
  EXPECT_FALSE(m.SlowInProgress(*at, milliseconds(100)));
  EXPECT_TRUE(m.SlowInProgress(*at + Duration(1), milliseconds(100)));
}

// Issue 25: with the slack cut from 60 to 20 ms, the time the ranks spend
// between iterations (fill, check, record: in no record's time_ms) must not
// read as slowness — the baseline's 95th percentile gap is allowed for, and
// one stall in the baseline does not widen it.
TEST(LiveMonitor, TheBaselinesGapBetweenIterationsIsNotSlowness) {
  LiveMonitor m(2, {}, 3);
  int64_t end = 0;
  for (int i = 0; i < 100; ++i) {
    end += i == 50 ? 500 : 30;  // 1 ms iterations, 29 ms apart; one stall of 499 ms
    Iter(&m, i, end, 0.5);
  }
  m.EndBaseline();
  const Duration last = milliseconds(end);
  // 29 ms of gap + 1.11 ms + slack: silence up to there is the usual.
  EXPECT_FALSE(m.SlowInProgress(last + milliseconds(30) + LiveMonitor::kPushSlack, last));
  EXPECT_TRUE(m.SlowInProgress(last + milliseconds(31) + LiveMonitor::kPushSlack, last));
}

TEST(LiveMonitor, StopConditions) {
  StopSpec stop;
  stop.min_busbw_gbps = 0.5;
  stop.for_iterations = 2;
  LiveMonitor busbw(2, stop, 3);
  Iter(&busbw, 0, 10, 0.5);
  Iter(&busbw, 1, 20, 9.5);
  EXPECT_FALSE(busbw.StopReason(milliseconds(20)).has_value());  // one slow iteration is not two
  Iter(&busbw, 2, 30, 9.5);
  auto why = busbw.StopReason(milliseconds(30));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(
      *why,
      "stop condition min_busbw: busbw below 0.5 GB/s for 2 iterations in a row (lowest 0.1000)");

  StopSpec ceiling;
  ceiling.max_iteration_time = std::chrono::seconds(2);
  LiveMonitor hang(2, ceiling, 3);
  Iter(&hang, 0, 100, 0.5);
  EXPECT_FALSE(hang.StopReason(milliseconds(1500)).has_value());
  auto quiet = hang.StopReason(milliseconds(2200));  // nothing completed for 2.1 s
  ASSERT_TRUE(quiet.has_value());
  EXPECT_EQ(*quiet,
            "stop condition max_iteration_time: no iteration completed for 2.1 s (limit 2s)");
  Iter(&hang, 1, 2300, 2499.5);
  EXPECT_EQ(*hang.StopReason(milliseconds(2300)),
            "stop condition max_iteration_time: iteration 1 took 2500 ms (limit 2s)");

  StopSpec data;
  data.max_wrong_elements = 0;
  LiveMonitor wrong(2, data, 3);
  Iter(&wrong, 0, 10, 0.5);
  EXPECT_FALSE(wrong.StopReason(milliseconds(10)).has_value());
  Iter(&wrong, 1, 20, 0.5, 2, 7);
  EXPECT_EQ(*wrong.StopReason(milliseconds(20)),
            "stop condition max_wrong_elements: 7 elements failed the data check (limit 0)");

  StopSpec errors;
  errors.max_errors = 1;
  LiveMonitor err(2, errors, 3);
  err.AddError();
  EXPECT_FALSE(err.StopReason({}).has_value());
  err.AddError();
  EXPECT_EQ(*err.StopReason({}), "stop condition max_errors: 2 errors (limit 1)");
}

TEST(LiveMonitor, ADeadRankDoesNotGrowMemoryWithoutBound) {
  LiveMonitor m(2, {}, 3);
  for (int i = 0; i < 10000; ++i) {
    LiveSample s{.iter = i,
                 .rank = 0,
                 .end = milliseconds(i),
                 .time_ms = 1,
                 .wait_ms = 0,
                 .bytes = 1e6,
                 .bus_factor = 1,
                 .wrong = 0};
    m.Add(s);  // rank 1 never reports
  }
  EXPECT_EQ(m.complete(), 0);
}

// Issue 49: the progress line read 1.07x while a link was down (it saw
// only the iterations that had finished). LiveBusbw counts the iteration in
// progress by its age: during a stall it falls, and a healthy job reads 1x.
TEST(LiveMonitor, TheLiveRateCountsAStallInProgressByItsAge) {
  LiveMonitor m(2, {}, 3);
  for (int i = 0; i < 20; ++i) Iter(&m, i, 10 * i, 0.5);  // 1 GB/s, an iteration every 10 ms
  m.EndBaseline();
  ASSERT_TRUE(m.baseline_median().has_value());
  // Between healthy iterations: the rate is the baseline's.
  EXPECT_NEAR(*m.LiveBusbw(milliseconds(191)) / *m.baseline_median(), 1.0, 0.01);
  // 3 s since the last iteration ended, none completed: slow now.
  const double during = *m.LiveBusbw(milliseconds(190 + 3000));
  EXPECT_LT(during / *m.baseline_median(), 0.01) << during;
  EXPECT_NEAR(*m.RecentBusbw() / *m.baseline_median(), 1.0, 0.01);  // what it showed before
  // The stall's iteration completes: the line shows it time-weighted.
  Iter(&m, 20, 190 + 3000, 2999.5);
  EXPECT_LT(*m.LiveBusbw(milliseconds(190 + 3001)) / *m.baseline_median(), 0.01);
}

}  // namespace
}  // namespace fdrill

#include "harness/controller/impact_watch.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

using std::chrono::milliseconds;

// One iteration of 2 ranks: 1 MB, ending at end_ms, taking time_ms.
void WatchIteration(LiveMonitor* m, int64_t iter, int64_t end_ms, double time_ms) {
  for (int r = 0; r < 2; ++r) {
    m->Add(LiveSample{
        .iter = iter, .rank = r, .end = milliseconds(end_ms), .time_ms = time_ms, .bytes = 1e6});
  }
}

// A workload of 1 ms iterations back to back, baseline over at 100 ms.
ImpactWatch::Monitors WatchOneWorkload() {
  ImpactWatch::Monitors monitors;
  monitors.push_back(std::make_unique<LiveMonitor>(2, StopSpec{}, 3));
  for (int i = 0; i < 100; ++i) WatchIteration(monitors[0].get(), i, i + 1, 1.0);
  monitors[0]->EndBaseline();
  return monitors;
}

TEST(ImpactWatch, AnIterationBelowTheBandAfterTheApplyShowsIt) {
  ImpactWatch watch;
  auto monitors = WatchOneWorkload();
  watch.Applied("slow", milliseconds(100));
  EXPECT_TRUE(watch.Look(monitors, milliseconds(101)).empty());
  WatchIteration(monitors[0].get(), 100, 105, 4.0);  // 0.25 GB/s
  auto seen = watch.Look(monitors, milliseconds(106));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, "slow");
  EXPECT_EQ(seen[0].second, milliseconds(6));
  EXPECT_TRUE(watch.empty());  // seen once
  EXPECT_TRUE(watch.Look(monitors, milliseconds(200)).empty());
}

TEST(ImpactWatch, SilenceShowsItAtNextLook) {
  ImpactWatch watch;
  auto monitors = WatchOneWorkload();
  EXPECT_FALSE(watch.NextLook(monitors).has_value());  // nothing awaited
  watch.Applied("slow", milliseconds(100));
  const auto next = watch.NextLook(monitors);
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(watch.Look(monitors, *next - Duration(1)).empty());
  auto seen = watch.Look(monitors, *next);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].second, *next - milliseconds(100));
  EXPECT_FALSE(watch.NextLook(monitors).has_value());
}

TEST(ImpactWatch, AnIterationInTheBandMovesNextLookLater) {
  ImpactWatch watch;
  auto monitors = WatchOneWorkload();
  watch.Applied("harmless", milliseconds(100));
  const auto before = watch.NextLook(monitors);
  WatchIteration(monitors[0].get(), 100, 102, 1.0);
  const auto after = watch.NextLook(monitors);
  ASSERT_TRUE(before && after);
  EXPECT_EQ(*after - *before, milliseconds(2));
  EXPECT_TRUE(watch.Look(monitors, *before).empty());
}

TEST(ImpactWatch, NoBandNoLook) {
  ImpactWatch watch;
  ImpactWatch::Monitors monitors;
  monitors.push_back(std::make_unique<LiveMonitor>(2, StopSpec{}, 3));
  watch.Applied("early", milliseconds(0));  // during the baseline
  EXPECT_FALSE(watch.NextLook(monitors).has_value());
  EXPECT_TRUE(watch.Look(monitors, milliseconds(100000)).empty());
  EXPECT_FALSE(watch.empty());
}

}  // namespace
}  // namespace fdrill

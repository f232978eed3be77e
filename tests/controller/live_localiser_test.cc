// The live culprit: published once per change while a fault is in force,
// the same answer the report's localisation gives over the same data.
#include "harness/controller/live_localiser.h"

#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace fdrill {
namespace {

// n0..n3 push counters every second from 0 to `until`; n1's shaper holds
// packets back from 15 s on.
void PushCounters(LiveLocaliser& l, int from, int until) {
  for (int t = from; t <= until; ++t) {
    for (int n = 0; n < 4; ++n) {
      const double ovl = n == 1 && t > 15 ? 300.0 * (t - 15) : 0;
      l.OnCounters("n" + std::to_string(n), t,
                   Json{{"fab0.qdisc_overlimits", ovl}, {"fab0.tx_bytes", 1e9 * t}});
    }
  }
}

TEST(LiveLocaliser, NamesTheLinkOnceAndAgainOnlyWhenTheAnswerChanges) {
  LiveLocaliser l;
  l.BaselineStarted(0);
  PushCounters(l, 0, 10);
  l.BaselineEnded(10);
  EXPECT_TRUE(l.Tick(11).empty());  // nothing in force
  l.FaultOn("slow", 15.2);
  PushCounters(l, 11, 16);
  auto u = l.Tick(16.1);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].id, "slow");
  EXPECT_EQ(u[0].culprit.element, "link n1 fab0");
  EXPECT_EQ(u[0].culprit.confidence, "high");
  EXPECT_EQ(l.Current(), "link n1 fab0 (high)");
  EXPECT_TRUE(l.Tick(16.2).empty());  // within kTickEvery
  PushCounters(l, 17, 18);
  EXPECT_TRUE(l.Tick(18.1).empty());  // the same answer is not published again
  l.FaultOff("slow");
  EXPECT_EQ(l.Current(), "");
  EXPECT_TRUE(l.Tick(19).empty());
}

// Issue 24: a fault on each of many nodes is localised kMaxPerTick at a
// time, in turn, so one tick never holds the pushes up for all of them;
// every fault still gets its culprit, each once.
TEST(LiveLocaliser, Issue24ManyFaultsInForceAreLocalisedAFewPerTickEachInTurn) {
  LiveLocaliser l;
  l.BaselineStarted(0);
  PushCounters(l, 0, 10);
  l.BaselineEnded(10);
  constexpr size_t kFaults = 2 * LiveLocaliser::kMaxPerTick + 1;
  for (size_t i = 0; i < kFaults; ++i) l.FaultOn("cap" + std::to_string(i), 15.2);
  PushCounters(l, 11, 16);
  std::set<std::string> named;
  double now = 16.1;
  for (size_t tick = 0; tick < 3; ++tick, now += LiveLocaliser::kTickEvery) {
    const auto u = l.Tick(now);
    EXPECT_EQ(u.size(), tick < 2 ? LiveLocaliser::kMaxPerTick : 1u) << "tick " << tick;
    for (const auto& x : u) {
      EXPECT_EQ(x.culprit.element, "link n1 fab0");
      EXPECT_TRUE(named.insert(x.id).second) << x.id << " published twice";
    }
  }
  EXPECT_EQ(named.size(), kFaults);
  EXPECT_TRUE(l.Tick(now).empty());  // every answer published: nothing new
}

// A day-long burn-in must not grow the controller without limit: of an
// hour of pushes it holds the last minute or so of each counter and a
// handful of older samples, and still names what the whole hour names.
TEST(LiveLocaliser, HoldsAMinuteOfCountersNotTheWholeRunAndAnswersTheSame) {
  LiveLocaliser l;
  std::vector<Event> pushed;
  auto push = [&](int t) {
    for (int n = 0; n < 4; ++n) {
      const double ovl = n == 1 && t > 3000 ? 300.0 * (t - 3000) : 0;
      Json counters{{"fab0.qdisc_overlimits", ovl}, {"fab0.tx_bytes", 1e6 * t}};
      l.OnCounters("n" + std::to_string(n), t, counters);
      pushed.push_back({.t = static_cast<double>(t),
                        .type = "counters",
                        .node = "n" + std::to_string(n),
                        .counters = {{"fab0.qdisc_overlimits", ovl}, {"fab0.tx_bytes", 1e6 * t}}});
    }
  };
  l.BaselineStarted(0);
  std::optional<Culprit> published;
  for (int t = 0; t <= 3600; ++t) {
    push(t);
    if (t == 10) l.BaselineEnded(10);
    if (t == 2999) l.FaultOn("slow", 2999.5);
    for (const auto& u : l.Tick(t + 0.5)) published = u.culprit;
  }
  // 8 series: the last kCounterSlack + kCompactEvery seconds, a few more.
  const double per_series = LiveLocaliser::kCounterSlack + LiveLocaliser::kCompactEvery + 8;
  EXPECT_LE(l.counter_samples(), static_cast<size_t>(8 * per_series));
  EXPECT_EQ(CounterIndex(pushed).samples(), 8u * 3601);

  ASSERT_TRUE(published.has_value());
  const auto whole = Localise(CounterIndex(pushed), {},
                              {.from_s = 2999.5, .to_s = 3600.5, .ref_from_s = 0, .ref_to_s = 10});
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(published->element, "link n1 fab0");
  EXPECT_EQ(published->element, whole->element);
  EXPECT_EQ(published->confidence, whole->confidence);
}

// Without link counters, the rank its peers wait for (records as pushed).
TEST(LiveLocaliser, NamesTheRankThePeersWaitFor) {
  LiveLocaliser l;
  l.BaselineStarted(0);
  for (int i = 0; i < 400; ++i) {
    const double end = 0.05 * i + 0.04;
    const bool slow = end > 15;
    for (int r = 0; r < 4; ++r) {
      l.OnRecord("n" + std::to_string(r), r, 0, i, end, 10, slow && r != 3 ? 30 : 0.2);
    }
  }
  l.BaselineEnded(10);
  l.FaultOn("pause", 15);
  auto u = l.Tick(19.9);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].culprit.element, "rank 3 (n3)");
  EXPECT_EQ(u[0].culprit.rank, 3);
}

// A rank sample holds a view of its node's name (reports/series.h): the
// localiser keeps its own copy, so the caller's string may be long gone (and
// its memory reused) by the time a tick localises.
TEST(LiveLocaliser, KeepsItsOwnCopyOfTheNodeNames) {
  LiveLocaliser l;
  l.BaselineStarted(0);
  for (int i = 0; i < 400; ++i) {
    const double end = 0.05 * i + 0.04;
    const bool slow = end > 15;
    for (int r = 0; r < 4; ++r) {
      std::string node = "a-node-name-too-long-to-fit-in-place-" + std::to_string(r);
      l.OnRecord(node, r, 0, i, end, 10, slow && r != 3 ? 30 : 0.2);
    }
  }
  std::vector<std::string> scribble(4000, std::string(40, '#'));  // reuses the freed names
  l.BaselineEnded(10);
  l.FaultOn("pause", 15);
  auto u = l.Tick(19.9);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].culprit.element, "rank 3 (a-node-name-too-long-to-fit-in-place-3)");
}

// Issue 49: two faults in force together, each named from its own class of
// evidence — the capped link from n1's shaper, the paused rank from the
// line-up — and, once the link's fault is reverted, the pause alone from
// kCounterLagS after the revert, not the link the shaper's last second
// still shows.
TEST(LiveLocaliser, OverlappingFaultsAreEachNamedFromTheirOwnEvidence) {
  LiveLocaliser l;
  l.BaselineStarted(0);
  for (int i = 0; i < 600; ++i) {
    const double end = 0.05 * i + 0.04;
    const bool slow = end > 15;
    for (int r = 0; r < 4; ++r) {
      l.OnRecord("n" + std::to_string(r), r, 0, i, end, 10, slow && r != 3 ? 30 : 0.2);
    }
  }
  PushCounters(l, 0, 10);
  l.BaselineEnded(10);
  l.FaultOn("cap", 15.2, "interface");
  l.FaultOn("pause", 15.2, "rank");
  PushCounters(l, 11, 20);
  std::map<std::string, std::string> named;
  for (const auto& u : l.Tick(19.9)) named[u.id] = u.culprit.element;
  EXPECT_EQ(named["cap"], "link n1 fab0");
  EXPECT_EQ(named["pause"], "rank 3 (n3)");
  EXPECT_EQ(l.Current(), "link n1 fab0 (high); rank 3 (n3) (high)");
  l.FaultOff("cap", 20);
  // n1's shaper counters stop rising at the revert (PushCounters' last
  // push at 20 still holds them).
  for (int t = 21; t <= 29; ++t) {
    for (int n = 0; n < 4; ++n) {
      l.OnCounters(
          "n" + std::to_string(n), t,
          Json{{"fab0.qdisc_overlimits", n == 1 ? 1500.0 : 0}, {"fab0.tx_bytes", 1e9 * t}});
    }
  }
  EXPECT_TRUE(l.Tick(29.5).empty());  // still the rank: nothing new to publish
  EXPECT_EQ(l.Current(), "rank 3 (n3) (high)");
}

}  // namespace
}  // namespace fdrill

// CounterIndex (reports/localise.h), what the localisation reads counters
// from: the series that changed, a node's sample landing in its series in
// any order, and Compact keeping what any window reads.
#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "reports/analysis.h"
#include "reports/localise.h"
#include "tests/reports/localise_inputs.h"

namespace fdrill {
namespace {

using reports_test::Samples;

TEST(CounterIndex, ChangingHoldsTheSeriesThatChangedAndACopyPointsIntoItsOwn) {
  const auto events = Samples({"fab0.qdisc_drops", "rank/1.cpu_seconds"},
                              [](const std::string& node, const std::string& c, int t) {
                                return node == "n2" && c == "fab0.qdisc_drops" ? t : 0.0;
                              });
  const CounterIndex index(events);
  EXPECT_EQ(index.series().size(), 8u);
  ASSERT_EQ(index.changing().size(), 1u);
  EXPECT_EQ(index.changing().begin()->first, (CounterIndex::Key{"n2", "fab0.qdisc_drops"}));
  EXPECT_TRUE(index.rank_cpu_sampled());  // sampled, though it never changed
  const CounterIndex copy = index;
  ASSERT_EQ(copy.changing().size(), 1u);
  EXPECT_EQ(copy.changing().begin()->second, &copy.series().at({"n2", "fab0.qdisc_drops"}));
  EXPECT_FALSE(CounterIndex().rank_cpu_sampled());
}

// A node's sample walks the index in name order; counters out of order, a
// counter the node lost, one it gained and another node's all land in their
// own series, and a series is "changing" from its first change on, also one
// that went back to where it started.
TEST(CounterIndex, ASampleInAnyOrderLandsInItsSeries) {
  std::mt19937 rng(7);
  std::map<CounterIndex::Key, CounterIndex::Series> expected;
  CounterIndex index;
  const std::vector<std::string> names = {"a.x", "b.y", "fab0.rx", "fab0.tx", "ib/m/1.z", "tcp.t"};
  for (int t = 0; t < 40; ++t) {
    for (const std::string node : {"n2", "n10", "n1"}) {
      std::vector<std::string> these = names;
      std::shuffle(these.begin(), these.end(), rng);
      if (t % 3 == 1) these.erase(these.begin() + 2);  // one gone this time
      if (t > 20) these.push_back("late." + node);     // a new one
      if (t % 2 == 0) std::sort(these.begin(), these.end());
      CounterIndex::NodeSample sample = index.AddSample(node, t);
      for (const std::string& name : these) {
        const double value = name == "b.y" ? (t % 4 == 1 ? 6 : 5) : name == "a.x" ? 1 : t;
        sample.Add(name, value);
        expected[{node, name}].push_back({t, value});
      }
    }
  }
  ASSERT_EQ(index.series().size(), expected.size());
  for (const auto& [key, series] : expected) {
    ASSERT_TRUE(index.series().contains(key)) << key.first << " " << key.second;
    EXPECT_EQ(index.series().at(key), series) << key.first << " " << key.second;
    const bool changed = series.front().second != series.back().second ||
                         std::any_of(series.begin(), series.end(),
                                     [&](const auto& x) { return x.second != series[0].second; });
    EXPECT_EQ(index.changing().contains(key), changed) << key.first << " " << key.second;
  }
  EXPECT_FALSE(index.changing().contains({"n1", "a.x"}));
  EXPECT_TRUE(index.changing().contains({"n1", "b.y"}));  // 5, 6, 5, ...
}

// The last sample at or before t, or nullptr.
const std::pair<double, double>* LastAtOrBefore(const CounterIndex::Series& s, double t) {
  const std::pair<double, double>* out = nullptr;
  for (const auto& x : s) {
    if (x.first <= t) out = &x;
  }
  return out;
}

// Compact keeps what Localise reads of any window whose ends are bounds or
// come at or after `before`: the rise (CounterIncrease, resets included),
// the last sample at or before each end, and whether the first precedes the
// start. Integer-valued counters, so a rise summed in other steps is exact.
TEST(CounterIndex, CompactKeepsWhatEveryWindowReads) {
  std::mt19937 rng(24);
  std::vector<Event> events;
  double t = 0, rising = 0, flat = 7, resetting = 0;
  for (int i = 0; i < 600; ++i) {
    t += 0.5 + (rng() % 100) / 100.0;  // irregular pushes
    rising += rng() % 5;
    if (rng() % 50 == 0) flat += 1;
    resetting = rng() % 40 == 0 ? static_cast<double>(rng() % 3) : resetting + rng() % 3;
    Event e{.t = t, .type = "counters", .node = "n" + std::to_string(i % 2)};
    e.counters = {{"fab0.qdisc_drops", rising},
                  {"fab0.carrier_changes", flat},
                  {"ib/mlx5_0/1.symbol_error", resetting}};
    events.push_back(std::move(e));
  }
  const CounterIndex whole(events);
  CounterIndex compact = whole;
  const double before = t - 60;
  const std::vector<double> bounds = {3.5, 40, 41.25, 200, 333.3};
  const size_t dropped = compact.Compact(before, bounds);
  EXPECT_EQ(compact.samples() + dropped, whole.samples());
  EXPECT_LT(compact.samples(), whole.samples() / 4);

  std::vector<double> ends = bounds;
  for (double x = before; x <= t + 1; x += 7.3) ends.push_back(x);
  ends.push_back(0.1);  // before any sample
  for (const auto& [key, s] : whole.series()) {
    const auto& c = compact.series().at(key);
    EXPECT_EQ(c.front(), s.front()) << key.second;
    EXPECT_EQ(c.back(), s.back()) << key.second;
    for (double from : ends) {
      const auto* a = LastAtOrBefore(s, from);
      const auto* b = LastAtOrBefore(c, from);
      ASSERT_EQ(a == nullptr, b == nullptr) << key.second << " at " << from;
      if (a != nullptr) {
        EXPECT_EQ(*a, *b) << key.second << " at " << from;
      }
      for (double to : ends) {
        if (!(to > from)) continue;
        EXPECT_EQ(CounterIncrease(c, from, to), CounterIncrease(s, from, to))
            << key.first << " " << key.second << " (" << from << ", " << to << "]";
      }
    }
  }
}

}  // namespace
}  // namespace fdrill

#include "agents/counters_delta.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

TEST(CountersDeltaTest, WholeFirstThenOnlyWhatChanged) {
  CountersDelta d;
  auto p = d.Next({{"fab0.rx_bytes", 10}, {"fab0.rx_errors", 0}});
  EXPECT_FALSE(p.delta);
  EXPECT_EQ(p.counters, (Json{{"fab0.rx_bytes", 10}, {"fab0.rx_errors", 0}}));
  p = d.Next({{"fab0.rx_bytes", 25}, {"fab0.rx_errors", 0}});
  EXPECT_TRUE(p.delta);
  EXPECT_EQ(p.counters, (Json{{"fab0.rx_bytes", 25}}));
  p = d.Next({{"fab0.rx_bytes", 25}, {"fab0.rx_errors", 0}});
  EXPECT_TRUE(p.delta);
  EXPECT_EQ(p.counters, Json::object());  // nothing moved: an empty delta, still a push
  p = d.Next({{"fab0.rx_bytes", 25}, {"fab0.rx_errors", 0}, {"rank/0.cpu_seconds", 2}});
  EXPECT_TRUE(p.delta);
  EXPECT_EQ(p.counters, (Json{{"rank/0.cpu_seconds", 2}}));  // a new counter
}

TEST(CountersDeltaTest, AWholeSampleWhenACounterIsGoneOrAfterReset) {
  CountersDelta d;
  d.Next({{"a", 1}, {"b", 1}});
  auto p = d.Next({{"a", 2}});  // b is gone: a delta cannot say so
  EXPECT_FALSE(p.delta);
  EXPECT_EQ(p.counters, (Json{{"a", 2}}));
  EXPECT_TRUE(d.Next({{"a", 2}}).delta);
  d.Reset();  // a receiver joined that holds nothing
  p = d.Next({{"a", 2}});
  EXPECT_FALSE(p.delta);
  EXPECT_EQ(p.counters, (Json{{"a", 2}}));
}

TEST(CountersDeltaTest, AWholeSampleWhenOneCounterIsReplacedByAnother) {
  CountersDelta d;
  d.Next({{"a", 1}, {"b", 1}, {"c", 1}});
  auto p = d.Next({{"a", 1}, {"bb", 1}, {"c", 2}});  // as many counters, b gone
  EXPECT_FALSE(p.delta);
  EXPECT_EQ(p.counters, (Json{{"a", 1}, {"bb", 1}, {"c", 2}}));
  p = d.Next({{"a", 1}, {"aa", 3}, {"bb", 1}, {"c", 2}, {"d", 4}});  // two new, none gone
  EXPECT_TRUE(p.delta);
  EXPECT_EQ(p.counters, (Json{{"aa", 3}, {"d", 4}}));
  p = d.Next({{"a", 1}, {"aa", 3}, {"bb", 5}, {"c", 2}, {"d", 4}});  // held what it sent
  EXPECT_TRUE(p.delta);
  EXPECT_EQ(p.counters, (Json{{"bb", 5}}));
}

TEST(CountersDeltaTest, AWholeSampleEveryKFullEvery) {
  CountersDelta d;
  std::vector<bool> whole;
  for (int i = 0; i < 2 * CountersDelta::kFullEvery + 1; ++i)
    whole.push_back(!d.Next({{"a", i}}).delta);
  for (size_t i = 0; i < whole.size(); ++i)
    EXPECT_EQ(whole[i], i % CountersDelta::kFullEvery == 0) << "push " << i;
}

}  // namespace
}  // namespace fdrill

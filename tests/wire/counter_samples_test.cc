#include "common/wire/counter_samples.h"

#include <memory>

#include <gtest/gtest.h>

namespace fdrill {
namespace {

Json Whole(Json counters) { return {{"node", "n1"}, {"counters", std::move(counters)}}; }
Json Delta(Json counters) {
  return {{"node", "n1"}, {"counters", std::move(counters)}, {"delta", true}};
}

TEST(CounterSamplesTest, ADeltaUpdatesTheLastWholeSample) {
  CounterSamples s;
  EXPECT_EQ(*s.Apply("n1", Whole({{"fab0.rx_bytes", 10}, {"fab0.rx_errors", 0}})),
            (Json{{"fab0.rx_bytes", 10}, {"fab0.rx_errors", 0}}));
  EXPECT_EQ(*s.Apply("n1", Delta({{"fab0.rx_bytes", 25}})),
            (Json{{"fab0.rx_bytes", 25}, {"fab0.rx_errors", 0}}));
  // Nothing changed: the same whole sample again.
  EXPECT_EQ(*s.Apply("n1", Delta(Json::object())),
            (Json{{"fab0.rx_bytes", 25}, {"fab0.rx_errors", 0}}));
  // A counter that appears (a rank's CPU seconds once it runs).
  EXPECT_EQ(*s.Apply("n1", Delta({{"rank/0.cpu_seconds", 1.5}})),
            (Json{{"fab0.rx_bytes", 25}, {"fab0.rx_errors", 0}, {"rank/0.cpu_seconds", 1.5}}));
}

// A sample handed out never changes under its holder: a delta patches the
// node's sample in place only once nobody else holds it.
TEST(CounterSamplesTest, ASampleStillHeldIsNotChangedByTheNextDelta) {
  CounterSamples s;
  std::shared_ptr<const Json> held = s.Apply("n1", Whole({{"a", 1}, {"b", 2}}));
  std::shared_ptr<const Json> next = s.Apply("n1", Delta({{"a", 5}}));
  EXPECT_EQ(*held, (Json{{"a", 1}, {"b", 2}}));
  EXPECT_EQ(*next, (Json{{"a", 5}, {"b", 2}}));
  EXPECT_NE(held.get(), next.get());
  held.reset();
  const Json* patched = next.get();
  next.reset();  // nobody holds it now: patched where it is
  std::shared_ptr<const Json> again = s.Apply("n1", Delta({{"b", 7}}));
  EXPECT_EQ(again.get(), patched);
  EXPECT_EQ(*again, (Json{{"a", 5}, {"b", 7}}));
}

TEST(CounterSamplesTest, AWholeSampleReplacesWhatWasThere) {
  CounterSamples s;
  ASSERT_TRUE(s.Apply("n1", Whole({{"a", 1}, {"b", 2}})));
  EXPECT_EQ(*s.Apply("n1", Whole({{"a", 3}})), (Json{{"a", 3}}));  // b is gone
}

TEST(CounterSamplesTest, ADeltaWithoutAWholeSampleIsDropped) {
  CounterSamples s;
  EXPECT_FALSE(s.Apply("n1", Delta({{"a", 1}})));
  ASSERT_TRUE(s.Apply("n2", Whole({{"a", 1}})));
  EXPECT_FALSE(s.Apply("n1", Delta({{"a", 2}})));  // n2's sample is not n1's
  EXPECT_EQ(*s.Apply("n2", Delta({{"a", 2}})), (Json{{"a", 2}}));
  EXPECT_FALSE(s.Apply("n1", Json{{"delta", true}, {"counters", 7}}));  // not an object
}

}  // namespace
}  // namespace fdrill

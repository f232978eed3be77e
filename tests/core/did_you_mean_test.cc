#include "common/core/did_you_mean.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

TEST(DidYouMean, NamesTheClosestCandidateWithinTwoEdits) {
  EXPECT_EQ(DidYouMean("rtae", {"rate", "burst"}), "did you mean \"rate\"?");
  EXPECT_EQ(DidYouMean("link_flapp", {"link_flap", "link_down"}), "did you mean \"link_flap\"?");
}

TEST(DidYouMean, SaysNothingWhenNothingIsClose) {
  EXPECT_EQ(DidYouMean("latency", {"rate", "burst"}), "");
  EXPECT_EQ(DidYouMean("rate", {}), "");
}

}  // namespace
}  // namespace fdrill

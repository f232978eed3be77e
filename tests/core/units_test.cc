#include "common/core/units.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

TEST(Units, Durations) {
  EXPECT_EQ(ParseDuration("15s").value(), std::chrono::seconds(15));
  EXPECT_EQ(ParseDuration("500ms").value(), std::chrono::milliseconds(500));
  EXPECT_EQ(ParseDuration("1.5s").value(), std::chrono::milliseconds(1500));
  EXPECT_EQ(ParseDuration("2m").value(), std::chrono::minutes(2));
  EXPECT_FALSE(ParseDuration("15").ok());
  EXPECT_NE(ParseDuration("15").status().message().find("15s"), std::string::npos);
  EXPECT_FALSE(ParseDuration("15 fortnights").ok());
  EXPECT_FALSE(ParseDuration("s").ok());
}

TEST(Units, RatesAreBitsAndMbpsIsRefusedWithAHint) {
  EXPECT_EQ(ParseRateBitsPerSec("100mbit").value(), 100000000u);
  EXPECT_EQ(ParseRateBitsPerSec("1gbit").value(), 1000000000u);
  EXPECT_EQ(ParseRateBitsPerSec("2.5gbit").value(), 2500000000u);
  auto bad = ParseRateBitsPerSec("100mbps");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("did you mean \"100mbit\""), std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(ParseRateBitsPerSec("100").ok());
  EXPECT_FALSE(ParseRateBitsPerSec("10bit").ok());
}

TEST(Units, SizesAreBinary) {
  EXPECT_EQ(ParseSizeBytes("4M").value(), 4u << 20);
  EXPECT_EQ(ParseSizeBytes("4MB").value(), 4u << 20);
  EXPECT_EQ(ParseSizeBytes("512K").value(), 512u << 10);
  EXPECT_EQ(ParseSizeBytes("1024").value(), 1024u);
  EXPECT_FALSE(ParseSizeBytes("4 parsecs").ok());
}

// Issue 21: 99999999tbit became "tbf rate 9223372036854775808bit". Each
// kind's range is checked on the number times its unit, before any integer.
TEST(Units, ValuesPastTheirKindsRangeAreRefusedWithTheRangeNotOverflowed) {
  EXPECT_EQ(ParseRateBitsPerSec("99999999tbit").status().message(),
            "rate \"99999999tbit\" is out of range: accepted 8kbit..10tbit");
  EXPECT_EQ(ParseRateBitsPerSec("10tbit").value(), 10'000'000'000'000u);
  EXPECT_EQ(ParseDuration("99999999999999999999h").status().message(),
            "duration \"99999999999999999999h\" is out of range: accepted 0s..168h");
  EXPECT_EQ(ParseDuration("168h").value(), std::chrono::hours(168));
  EXPECT_EQ(ParseSizeBytes("99999999999G").status().message(),
            "size \"99999999999G\" is out of range: accepted 0B..16TiB");
}

TEST(Units, ACallerNarrowsTheRangeAndTheMessageSaysIt) {
  EXPECT_EQ(ParseDuration("20s", {std::chrono::microseconds(1), std::chrono::seconds(10)})
                .status()
                .message(),
            "duration \"20s\" is out of range: accepted 1us..10s");
  EXPECT_EQ(ParseSizeBytes("1K", kTbfBursts).status().message(),
            "size \"1K\" is out of range: accepted 2KiB..2GiB");
  EXPECT_EQ(IntOutOfRange("5000", 1, 1000), "5000 is out of range: accepted 1..1000");
  EXPECT_TRUE(IsIntegerBeyondInt64("99999999999999999999"));
  EXPECT_TRUE(IsIntegerBeyondInt64("-99999999999999999999"));
  EXPECT_FALSE(IsIntegerBeyondInt64("9223372036854775807"));
  EXPECT_FALSE(IsIntegerBeyondInt64("12x"));
}

TEST(Units, TheDefaultTbfBurstNeverExceedsWhatTcTakes) {
  EXPECT_EQ(DefaultTbfBurstBytes(8'000), 128u * 1024);
  EXPECT_EQ(DefaultTbfBurstBytes(kRates.hi), kTbfBursts.hi);
}

TEST(Units, FormatRoundTrips) {
  EXPECT_EQ(FormatDuration(std::chrono::seconds(15)), "15s");
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(1500)), "1500ms");
  EXPECT_EQ(FormatRate(100000000), "100mbit");
  EXPECT_EQ(FormatSize(4u << 20), "4MiB");
}

}  // namespace
}  // namespace fdrill

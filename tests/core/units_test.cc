#include "harness/core/units.h"

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

TEST(Units, FormatRoundTrips) {
  EXPECT_EQ(FormatDuration(std::chrono::seconds(15)), "15s");
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(1500)), "1500ms");
  EXPECT_EQ(FormatRate(100000000), "100mbit");
  EXPECT_EQ(FormatSize(4u << 20), "4MiB");
}

}  // namespace
}  // namespace fdrill

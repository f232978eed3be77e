#include "common/core/ipv4.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

TEST(Ipv4Prefix, ParsesAddressesAndPrefixesAndNothingElse) {
  auto a = ParseIpv4Prefix("198.19.0.254");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->len, 32);
  EXPECT_EQ(a->ToString(), "198.19.0.254/32");
  auto all = ParseIpv4Prefix("0.0.0.0/0");
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->Contains(a->addr));
  auto net = ParseIpv4Prefix("198.19.0.7/24");  // host bits cleared
  ASSERT_TRUE(net);
  EXPECT_EQ(net->ToString(), "198.19.0.0/24");
  EXPECT_TRUE(net->Contains(a->addr));
  EXPECT_FALSE(ParseIpv4Prefix("198.18.0.0/16")->Contains(a->addr));
  EXPECT_TRUE(ParseIpv4Prefix("198.0.0.0/8")->Overlaps(*net));
  EXPECT_FALSE(ParseIpv4Prefix("198.18.0.0/24")->Overlaps(*net));
  for (const char* bad : {"fab0", "256.1.1.1", "1.2.3", "1.2.3.4/33", "1.2.3.4/", "::1", "1.2.3.4 ",
                          "01234.1.1.1", ""})
    EXPECT_FALSE(ParseIpv4Prefix(bad)) << bad;
}

}  // namespace
}  // namespace fdrill

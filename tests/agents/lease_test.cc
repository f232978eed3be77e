// The lease's owner and limits (agents/lease.h): one drill at a time, told
// who holds the node; the drill's declared limits hold on the node.
#include "agents/lease.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_clock.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;

constexpr int64_t kWall = 1764690000000000000;  // 2025-12-02T15:40:00Z

TEST(Lease, OneOwnerAtATimeAndTheOthersAreToldWhoAndUntilWhen) {
  FakeClock clock;
  Lease lease;
  const auto now = clock.Now();
  ASSERT_TRUE(lease.Take("CN=a,OU=controller", "drill-1", milliseconds(5000), {}, now, kWall).ok());
  // The owner renews; another certificate, or the same one for another drill, is refused.
  EXPECT_TRUE(lease.Take("CN=a,OU=controller", "drill-1", milliseconds(5000), {}, now, kWall).ok());
  Status other = lease.Take("CN=b,OU=controller", "drill-2", milliseconds(5000), {}, now, kWall);
  EXPECT_EQ(other.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(other.message().find("held by CN=a,OU=controller for drill drill-1 until "
                                 "2025-12-02T15:40:05Z"),
            std::string::npos)
      << other.message();
  EXPECT_FALSE(
      lease.Take("CN=a,OU=controller", "drill-2", milliseconds(5000), {}, now, kWall).ok());
  // Faults need the live lease of their own drill.
  EXPECT_TRUE(lease.Check("CN=a,OU=controller", "drill-1", "apply", now, kWall).ok());
  Status wrong = lease.Check("CN=b,OU=controller", "drill-1", "apply", now, kWall);
  EXPECT_EQ(wrong.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(wrong.message().find("\"apply\" refused"), std::string::npos) << wrong.message();
  // Undoing is refused under another's lease, allowed on a free node.
  EXPECT_FALSE(lease.CheckNotOthers("CN=b,OU=controller", "x", "revert", now, kWall).ok());
  // Only the owner releases.
  EXPECT_FALSE(lease.Release("CN=b,OU=controller", "drill-1").ok());
  EXPECT_TRUE(lease.held());
  EXPECT_TRUE(lease.Release("CN=a,OU=controller", "drill-1").ok());
  EXPECT_FALSE(lease.held());
  EXPECT_TRUE(lease.CheckNotOthers("CN=b,OU=controller", "x", "revert", now, kWall).ok());
  Status none = lease.Check("CN=a,OU=controller", "drill-1", "apply", now, kWall);
  EXPECT_NE(none.message().find("no drill holds this node's lease"), std::string::npos);
}

TEST(Lease, ALapsedLeaseIsFreeForTheNextDrill) {
  FakeClock clock;
  Lease lease;
  ASSERT_TRUE(lease.Take("CN=a", "d1", milliseconds(1000), {}, clock.Now(), kWall).ok());
  clock.Advance(milliseconds(1001));
  EXPECT_TRUE(lease.Lapsed(clock.Now()));
  EXPECT_FALSE(lease.Check("CN=a", "d1", "apply", clock.Now(), kWall).ok());
  EXPECT_TRUE(lease.Take("CN=b", "d2", milliseconds(1000), {}, clock.Now(), kWall).ok());
  EXPECT_EQ(lease.owner(), "CN=b");
}

TEST(Lease, LimitsAreFixedForTheDrill) {
  FakeClock clock;
  Lease lease;
  LeaseLimits one;
  one.max_faults = 1;
  ASSERT_TRUE(lease.Take("CN=a", "d1", milliseconds(1000), one, clock.Now(), kWall).ok());
  LeaseLimits wider;
  wider.max_faults = 5;
  Status s = lease.Take("CN=a", "d1", milliseconds(1000), wider, clock.Now(), kWall);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST(LeaseLimits, KindsTargetsAndHowManyAtOnce) {
  auto limits = LeaseLimits::FromJson({{"kinds", {"link_rate"}},
                                       {"targets", {"fab0"}},
                                       {"max_faults", 1},
                                       {"max_duration_ms", 9000}});
  ASSERT_TRUE(limits.ok()) << limits.status().ToString();
  EXPECT_TRUE(limits->Admit("link_rate", "fab0", 0).ok());
  Status kind = limits->Admit("link_down", "fab0", 0);
  EXPECT_EQ(kind.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(kind.message().find("allows only link_rate"), std::string::npos) << kind.message();
  Status target = limits->Admit("link_rate", "fab1", 0);
  EXPECT_NE(target.message().find("allows only targets fab0"), std::string::npos)
      << target.message();
  Status count = limits->Admit("link_rate", "fab0", 1);
  EXPECT_NE(count.message().find("allows 1 at once"), std::string::npos) << count.message();
  EXPECT_EQ(limits->max_duration_ms, 9000);
  // A node the drill puts no fault on.
  auto none = LeaseLimits::FromJson({{"kinds", Json::array()}, {"max_faults", 0}});
  Status refused = none->Admit("link_rate", "fab0", 0);
  EXPECT_NE(refused.message().find("puts no fault on this node"), std::string::npos)
      << refused.message();
  // No limits given: none apply.
  EXPECT_TRUE(LeaseLimits::FromJson(Json())->Admit("cpu_hog", "cpu", 100).ok());
  // Malformed limits are the request's fault.
  EXPECT_FALSE(LeaseLimits::FromJson({{"kinds", "link_rate"}}).ok());
  EXPECT_FALSE(LeaseLimits::FromJson({{"max_faults", -1}}).ok());
  EXPECT_FALSE(LeaseLimits::FromJson({{"max_duration_ms", 1.5}}).ok());
}

}  // namespace
}  // namespace fdrill

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_net.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Argv = std::vector<std::string>;

std::unique_ptr<Fault> Make(FakeNetKernel& k, Json params) {
  auto f = MakeFault("link_flap", params, Host{&k, nullptr});
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(*f);
}

TEST(LinkFlap, DownForTheDurationThenUpWithExactArgv) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab0"}, {"down", "3s"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok());
  EXPECT_FALSE(k.ifaces["fab0"].up);
  ASSERT_TRUE(f->Tick(milliseconds(1000)).ok());
  ASSERT_TRUE(f->Tick(milliseconds(2999)).ok());
  EXPECT_FALSE(k.ifaces["fab0"].up);
  EXPECT_FALSE(f->Finished(milliseconds(2999)));
  ASSERT_TRUE(f->Tick(milliseconds(3000)).ok());
  EXPECT_TRUE(k.ifaces["fab0"].up);
  EXPECT_TRUE(f->Finished(milliseconds(3000)));
  ASSERT_TRUE(f->Tick(milliseconds(3100)).ok());  // repeated ticks change nothing
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  std::vector<Argv> want = {{"ip", "link", "set", "dev", "fab0", "down"},
                            {"ip", "link", "set", "dev", "fab0", "up"}};
  EXPECT_EQ(k.Mutations(), want);
}

TEST(LinkFlap, CountAndPeriodMakeRepeatedFlaps) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab0"}, {"down", "1s"}, {"count", 3}, {"period", "4s"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  std::vector<bool> seen;
  for (int ms = 0; ms <= 13000; ms += 500) {
    ASSERT_TRUE(f->Tick(milliseconds(ms)).ok());
    seen.push_back(k.ifaces["fab0"].up);
  }
  int downs = 0;
  for (size_t i = 1; i < seen.size(); ++i) downs += (seen[i - 1] && !seen[i]) ? 1 : 0;
  EXPECT_EQ(downs, 2);  // the first flap began at Apply
  EXPECT_FALSE(f->Finished(milliseconds(8999)));
  EXPECT_TRUE(f->Finished(seconds(9)));
  EXPECT_TRUE(k.ifaces["fab0"].up);
}

TEST(LinkFlap, RevertMidFlapBringsTheLinkUpAndIsSafeTwice) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab0"}, {"down", "10s"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(k.Mutations().size(), 2u);
}

TEST(LinkFlap, RevertAfterFailedApply) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab0"}, {"down", "3s"}});
  ASSERT_TRUE(f->Capture().ok());
  k.FailNext({"ip", "link", "set"}, "RTNETLINK answers: Operation not permitted\n");
  EXPECT_FALSE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_TRUE(k.ifaces["fab0"].up);
}

TEST(LinkFlap, RefusesALinkAlreadyDownAndBadParams) {
  FakeNetKernel k;
  k.ifaces["fab0"].up = false;
  auto f = Make(k, {{"interface", "fab0"}, {"down", "3s"}});
  EXPECT_EQ(f->Capture().code(), StatusCode::kFailedPrecondition);
  Host host{&k, nullptr};
  auto no_unit = MakeFault("link_flap", {{"interface", "fab0"}, {"down", "3"}}, host);
  ASSERT_FALSE(no_unit.ok());
  EXPECT_NE(no_unit.status().message().find("params.down"), std::string::npos);
  auto short_period = MakeFault(
      "link_flap", {{"interface", "fab0"}, {"down", "3s"}, {"count", 2}, {"period", "2s"}}, host);
  ASSERT_FALSE(short_period.ok());
  EXPECT_NE(short_period.status().message().find("params.period"), std::string::npos);
}

}  // namespace
}  // namespace fdrill

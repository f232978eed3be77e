#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_net.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;
TEST(LinkFlap, DownForTheDurationThenUpWithExactArgv) {
  FakeNetKernel k;
  auto f = MakeOk("link_flap", {{"interface", "fab0"}, {"down", "3s"}}, k.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
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
  ASSERT_TRUE(Reverted(*f));
  std::vector<Argv> want = {{"ip", "link", "set", "dev", "fab0", "down"},
                            {"ip", "link", "set", "dev", "fab0", "up"}};
  EXPECT_EQ(k.Mutations(), want);
}

TEST(LinkFlap, CountAndPeriodMakeRepeatedFlaps) {
  FakeNetKernel k;
  auto f =
      MakeOk("link_flap", {{"interface", "fab0"}, {"down", "1s"}, {"count", 3}, {"period", "4s"}},
             k.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  std::vector<bool> seen;
  for (int ms = 0; ms <= 13000; ms += 500) {
    ASSERT_TRUE(f->Tick(milliseconds(ms)).ok());
    seen.push_back(k.ifaces["fab0"].up);
  }
  int downs = 0;
  for (size_t i = 1; i < seen.size(); ++i) downs += (seen[i - 1] && !seen[i]) ? 1 : 0;
  EXPECT_EQ(downs, 2);  // the first flap began at Apply
  EXPECT_FALSE(f->Finished(milliseconds(8999)));
  EXPECT_TRUE(f->Finished(std::chrono::seconds(9)));
  EXPECT_TRUE(k.ifaces["fab0"].up);
}

TEST(LinkFlap, NextChangeNamesEachEdgeThenNothing) {
  FakeNetKernel k;
  auto f =
      MakeOk("link_flap", {{"interface", "fab0"}, {"down", "1s"}, {"count", 2}, {"period", "4s"}},
             k.host());
  using std::chrono::seconds;
  EXPECT_EQ(f->NextChange(milliseconds(0)), seconds(1));  // up
  EXPECT_EQ(f->NextChange(milliseconds(999)), seconds(1));
  EXPECT_EQ(f->NextChange(milliseconds(1000)), seconds(4));  // the second flap's down
  EXPECT_EQ(f->NextChange(milliseconds(4000)), seconds(5));
  EXPECT_EQ(f->NextChange(milliseconds(5000)), std::nullopt);  // the last flap is up
  auto rate = MakeOk("link_rate", {{"interface", "fab0"}, {"rate", "1gbit"}}, k.host());
  EXPECT_EQ(rate->NextChange(milliseconds(0)), std::nullopt);  // nothing scheduled
}

TEST(LinkFlap, RevertMidFlapBringsTheLinkUpAndIsSafeTwice) {
  FakeNetKernel k;
  auto f = MakeOk("link_flap", {{"interface", "fab0"}, {"down", "10s"}}, k.host());
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, k));
  EXPECT_EQ(k.Mutations().size(), 2u);
}

TEST(LinkFlap, RevertAfterFailedApply) {
  FakeNetKernel k;
  auto f = MakeOk("link_flap", {{"interface", "fab0"}, {"down", "3s"}}, k.host());
  ASSERT_TRUE(f->Capture().ok());
  k.FailNext({"ip", "link", "set"}, "RTNETLINK answers: Operation not permitted\n");
  EXPECT_FALSE(f->Apply().ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_TRUE(k.ifaces["fab0"].up);
}

TEST(LinkFlap, RefusesALinkAlreadyDownAndBadParams) {
  FakeNetKernel k;
  k.ifaces["fab0"].up = false;
  auto f = MakeOk("link_flap", {{"interface", "fab0"}, {"down", "3s"}}, k.host());
  EXPECT_EQ(f->Capture().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(ErrorContains(
      ParamsError("link_flap", {{"interface", "fab0"}, {"down", "3"}}, k.host()), "params.down"));
  EXPECT_TRUE(ErrorContains(
      ParamsError("link_flap",
                  {{"interface", "fab0"}, {"down", "3s"}, {"count", 2}, {"period", "2s"}},
                  k.host()),
      "params.period"));
}

}  // namespace
}  // namespace fdrill

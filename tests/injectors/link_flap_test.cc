#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_net.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;

Json FlapNeighbour(const std::string& dst, const std::string& lladdr, const std::string& state) {
  return {{"dst", dst}, {"lladdr", lladdr}, {"state", Json::array({state})}};
}

Argv NeighReplaceArgv(const std::string& dst, const std::string& lladdr, const std::string& nud) {
  return {"ip", "neigh", "replace", dst, "lladdr", lladdr, "dev", "fab0", "nud", nud};
}

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

// The down flushes fab0's neighbours (the fake does, as the kernel's
// neigh_ifdown does); every up edge puts them back right after the up: the
// kernel's own as STALE, the operator's PERMANENT as PERMANENT.
TEST(LinkFlap, EveryUpEdgeReAddsTheNeighboursTheDownFlushed) {
  FakeNetKernel k;
  k.ifaces["fab0"].neighbours =
      Json::array({FlapNeighbour("198.18.0.2", "02:fd:00:00:01:02", "REACHABLE"),
                   FlapNeighbour("198.18.0.3", "02:fd:00:00:01:03", "PERMANENT"),
                   {{"dst", "198.18.0.4"}, {"state", Json::array({"FAILED"})}}});
  auto f =
      MakeOk("link_flap", {{"interface", "fab0"}, {"down", "1s"}, {"count", 2}, {"period", "4s"}},
             k.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(k.calls.back(), (Argv{"ip", "-j", "neigh", "show", "dev", "fab0"}));
  EXPECT_EQ(
      f->Saved()["neighbours"],
      Json::array(
          {{{"dst", "198.18.0.2"}, {"lladdr", "02:fd:00:00:01:02"}, {"state", "REACHABLE"}},
           {{"dst", "198.18.0.3"}, {"lladdr", "02:fd:00:00:01:03"}, {"state", "PERMANENT"}}}));
  ASSERT_TRUE(f->Apply().ok());
  EXPECT_TRUE(k.ifaces["fab0"].neighbours.empty());
  for (int ms : {1000, 4000, 5000}) ASSERT_TRUE(f->Tick(milliseconds(ms)).ok()) << ms;
  ASSERT_TRUE(Reverted(*f));
  const Argv down = {"ip", "link", "set", "dev", "fab0", "down"};
  const Argv up = {"ip", "link", "set", "dev", "fab0", "up"};
  const Argv stale = NeighReplaceArgv("198.18.0.2", "02:fd:00:00:01:02", "stale");
  const Argv permanent = NeighReplaceArgv("198.18.0.3", "02:fd:00:00:01:03", "permanent");
  std::vector<Argv> want = {down, up, stale, permanent, down, up, stale, permanent};
  EXPECT_EQ(k.Mutations(), want);  // the revert found them all there: nothing more
  EXPECT_EQ(k.ifaces["fab0"].neighbours,
            Json::array({FlapNeighbour("198.18.0.2", "02:fd:00:00:01:02", "STALE"),
                         FlapNeighbour("198.18.0.3", "02:fd:00:00:01:03", "PERMANENT")}));
}

TEST(LinkFlap, ADynamicNeighbourThatFailsDoesNotFailTheFlapAPermanentOneDoes) {
  FakeNetKernel k;
  k.ifaces["fab0"].neighbours =
      Json::array({FlapNeighbour("198.18.0.2", "02:fd:00:00:01:02", "STALE"),
                   FlapNeighbour("198.18.0.3", "02:fd:00:00:01:03", "PERMANENT")});
  auto f =
      MakeOk("link_flap", {{"interface", "fab0"}, {"down", "1s"}, {"count", 2}, {"period", "4s"}},
             k.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  k.FailNext({"ip", "neigh", "replace", "198.18.0.2"}, "RTNETLINK answers: No buffer space\n");
  ASSERT_TRUE(f->Tick(milliseconds(1000)).ok());
  EXPECT_TRUE(k.ifaces["fab0"].up);
  EXPECT_EQ(k.ifaces["fab0"].neighbours.size(), 1u);  // the permanent one
  ASSERT_TRUE(f->Tick(milliseconds(4000)).ok());
  k.FailNext({"ip", "neigh", "replace", "198.18.0.3"}, "RTNETLINK answers: No buffer space\n");
  Status s = f->Tick(milliseconds(5000));
  EXPECT_TRUE(ErrorStartsWith(s, "link_flap fab0: ")) << s.ToString();
  EXPECT_TRUE(ErrorContains(s, "198.18.0.3")) << s.ToString();
  EXPECT_TRUE(k.ifaces["fab0"].up);
  EXPECT_TRUE(ErrorContains(f->VerifyReverted(), "198.18.0.3"));
  // The revert finds the link up and puts back only what is missing.
  const size_t before = k.Mutations().size();
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(k.Mutations().size(), before + 1);
  EXPECT_EQ(k.Mutations().back(), NeighReplaceArgv("198.18.0.3", "02:fd:00:00:01:03", "permanent"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(k.Mutations().size(), before + 1);
}

}  // namespace
}  // namespace fdrill

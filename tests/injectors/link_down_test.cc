#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_net.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

// fab0 as an operator left it: one dynamic neighbour, one permanent.
void WithNeighbours(FakeNetKernel& k) {
  k.ifaces["fab0"].neighbours = Json::array({{{"dst", "198.18.0.2"},
                                              {"lladdr", "02:fd:00:00:01:02"},
                                              {"state", Json::array({"REACHABLE"})}},
                                             {{"dst", "fe80::3"},
                                              {"lladdr", "02:fd:00:00:01:03"},
                                              {"state", Json::array({"PERMANENT"})}}});
}

const Json kRestored = Json::array(
    {{{"dst", "198.18.0.2"}, {"lladdr", "02:fd:00:00:01:02"}, {"state", Json::array({"STALE"})}},
     {{"dst", "fe80::3"}, {"lladdr", "02:fd:00:00:01:03"}, {"state", Json::array({"PERMANENT"})}}});

TEST(LinkDown, DownForTheWindowThenUpWithExactArgv) {
  FakeNetKernel k;
  auto f = MakeOk("link_down", {{"interface", "fab0"}}, k.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["prior_up"], true);
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_FALSE(k.ifaces["fab0"].up);
  ASSERT_TRUE(f->Tick(std::chrono::seconds(30)).ok());  // no timetable: still down
  EXPECT_FALSE(f->Finished(std::chrono::hours(1)));
  EXPECT_FALSE(k.ifaces["fab0"].up);
  EXPECT_FALSE(f->VerifyReverted().ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_TRUE(k.ifaces["fab0"].up);
  std::vector<Argv> want = {{"ip", "link", "set", "dev", "fab0", "down"},
                            {"ip", "link", "set", "dev", "fab0", "up"}};
  EXPECT_EQ(k.Mutations(), want);
}

TEST(LinkDown, RevertTwiceAndWithoutApplyTouchNothingMore) {
  FakeNetKernel k;
  auto f = MakeOk("link_down", {{"interface", "fab0"}}, k.host());
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, k));
  EXPECT_EQ(k.Mutations().size(), 2u);
}

TEST(LinkDown, RevertAfterFailedApply) {
  FakeNetKernel k;
  auto f = MakeOk("link_down", {{"interface", "fab0"}}, k.host());
  ASSERT_TRUE(f->Capture().ok());
  k.FailNext({"ip", "link", "set"}, "RTNETLINK answers: Operation not permitted\n");
  ASSERT_TRUE(ErrorContains(f->Apply(), "Operation not permitted"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(k.Mutations().size(), 1u);  // only the failed down
}

TEST(LinkDown, RefusesALinkAlreadyDownAndAMissingOne) {
  FakeNetKernel k;
  k.ifaces["fab0"].up = false;
  auto f = MakeOk("link_down", {{"interface", "fab0"}}, k.host());
  EXPECT_EQ(f->Capture().code(), StatusCode::kFailedPrecondition);
  auto g = MakeOk("link_down", {{"interface", "fab7"}}, k.host());
  EXPECT_TRUE(ErrorContains(g->Capture(), StatusCode::kNotFound, "fab7"));
  EXPECT_TRUE(k.Mutations().empty());
}

TEST(LinkDown, ParamsNameTheKey) {
  FakeNetKernel k;
  EXPECT_TRUE(RefusedNaming("link_down", Json::object(), k.host(), "interface"));
  EXPECT_TRUE(
      RefusedNaming("link_down", {{"interface", "fab0"}, {"down", "3s"}}, k.host(), "down"));
  EXPECT_TRUE(k.calls.empty());
}

TEST(LinkDown, RestoredFromJournalBringsTheLinkBackUp) {
  FakeNetKernel k;
  Json record = JournalApplyAndDie("link_down", {{"interface", "fab0"}}, k.host());
  ASSERT_TRUE(Reverted(*Restore(record, k.host())));
  EXPECT_TRUE(k.ifaces["fab0"].up);
}

TEST(LinkDown, RevertOfAVanishedInterfaceSucceeds) {
  FakeNetKernel k;
  auto f = MakeOk("link_down", {{"interface", "fab0"}}, k.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  k.ifaces.erase("fab0");  // the namespace went away with it
  EXPECT_TRUE(f->Revert().ok());
}

TEST(LinkDown, TheRevertPutsBackTheNeighboursTheDownFlushed) {
  FakeNetKernel k;
  WithNeighbours(k);
  auto f = MakeOk("link_down", {{"interface", "fab0"}}, k.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  EXPECT_TRUE(k.ifaces["fab0"].neighbours.empty());
  EXPECT_TRUE(ErrorContains(f->VerifyReverted(), "expected up"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(k.ifaces["fab0"].neighbours, kRestored);
  std::vector<Argv> want = {{"ip", "link", "set", "dev", "fab0", "down"},
                            {"ip", "link", "set", "dev", "fab0", "up"},
                            {"ip", "neigh", "replace", "198.18.0.2", "lladdr", "02:fd:00:00:01:02",
                             "dev", "fab0", "nud", "stale"},
                            {"ip", "neigh", "replace", "fe80::3", "lladdr", "02:fd:00:00:01:03",
                             "dev", "fab0", "nud", "permanent"}};
  EXPECT_EQ(k.Mutations(), want);
}

TEST(LinkDown, RestoredFromJournalPutsBackItsNeighbours) {
  FakeNetKernel k;
  WithNeighbours(k);
  Json record = JournalApplyAndDie("link_down", {{"interface", "fab0"}}, k.host());
  EXPECT_EQ(record["saved"]["neighbours"].size(), 2u);
  EXPECT_TRUE(k.ifaces["fab0"].neighbours.empty());
  ASSERT_TRUE(Reverted(*Restore(record, k.host())));
  EXPECT_TRUE(k.ifaces["fab0"].up);
  EXPECT_EQ(k.ifaces["fab0"].neighbours, kRestored);
}

// A journal an agent wrote before neighbours were kept: {"prior_up": true}.
TEST(LinkDown, AJournalWithoutNeighboursStillRestoresTheLink) {
  FakeNetKernel k;
  WithNeighbours(k);
  Json record = JournalApplyAndDie("link_down", {{"interface", "fab0"}}, k.host());
  record["saved"] = {{"prior_up", true}};
  ASSERT_TRUE(Reverted(*Restore(record, k.host())));
  EXPECT_TRUE(k.ifaces["fab0"].up);
  EXPECT_TRUE(k.ifaces["fab0"].neighbours.empty());
  EXPECT_EQ(k.Mutations().back(), (Argv{"ip", "link", "set", "dev", "fab0", "up"}));
}

}  // namespace
}  // namespace fdrill

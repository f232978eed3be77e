#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_net.h"

namespace fdrill {
namespace {

using Argv = std::vector<std::string>;

std::unique_ptr<Fault> Make(FakeNetKernel& k, Json params) {
  auto f = MakeFault("link_down", params, Host{&k, nullptr});
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(*f);
}

TEST(LinkDown, DownForTheWindowThenUpWithExactArgv) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab0"}});
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["prior_up"], true);
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok());
  EXPECT_FALSE(k.ifaces["fab0"].up);
  ASSERT_TRUE(f->Tick(std::chrono::seconds(30)).ok());  // no timetable: still down
  EXPECT_FALSE(f->Finished(std::chrono::hours(1)));
  EXPECT_FALSE(k.ifaces["fab0"].up);
  EXPECT_FALSE(f->VerifyReverted().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_TRUE(k.ifaces["fab0"].up);
  std::vector<Argv> want = {{"ip", "link", "set", "dev", "fab0", "down"},
                            {"ip", "link", "set", "dev", "fab0", "up"}};
  EXPECT_EQ(k.Mutations(), want);
}

TEST(LinkDown, RevertTwiceAndWithoutApplyTouchNothingMore) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab0"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_TRUE(k.Mutations().empty());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(k.Mutations().size(), 2u);
}

TEST(LinkDown, RevertAfterFailedApply) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab0"}});
  ASSERT_TRUE(f->Capture().ok());
  k.FailNext({"ip", "link", "set"}, "RTNETLINK answers: Operation not permitted\n");
  Status s = f->Apply();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Operation not permitted"), std::string::npos);
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(k.Mutations().size(), 1u);  // only the failed down
}

TEST(LinkDown, RefusesALinkAlreadyDownAndAMissingOne) {
  FakeNetKernel k;
  k.ifaces["fab0"].up = false;
  auto f = Make(k, {{"interface", "fab0"}});
  EXPECT_EQ(f->Capture().code(), StatusCode::kFailedPrecondition);
  auto g = Make(k, {{"interface", "fab7"}});
  Status s = g->Capture();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("fab7"), std::string::npos);
  EXPECT_TRUE(k.Mutations().empty());
}

TEST(LinkDown, ParamsNameTheKey) {
  FakeNetKernel k;
  Host host{&k, nullptr};
  auto missing = MakeFault("link_down", Json::object(), host);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message().rfind("params.interface:", 0), 0u)
      << missing.status().message();
  auto extra = MakeFault("link_down", {{"interface", "fab0"}, {"down", "3s"}}, host);
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.status().message().rfind("params.down:", 0), 0u) << extra.status().message();
  EXPECT_TRUE(k.calls.empty());
}

TEST(LinkDown, RestoredFromJournalBringsTheLinkBackUp) {
  FakeNetKernel k;
  Json params = {{"interface", "fab0"}};
  auto first = Make(k, params);
  ASSERT_TRUE(first->Capture().ok());
  Json record = {{"kind", "link_down"}, {"params", params}, {"saved", first->Saved()}};
  ASSERT_TRUE(first->Apply().ok());
  first.reset();
  auto again = RestoreFault(record, Host{&k, nullptr});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE((*again)->Revert().ok());
  ASSERT_TRUE((*again)->VerifyReverted().ok());
  EXPECT_TRUE(k.ifaces["fab0"].up);
}

TEST(LinkDown, RevertOfAVanishedInterfaceSucceeds) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab0"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  k.ifaces.erase("fab0");  // the namespace went away with it
  EXPECT_TRUE(f->Revert().ok());
}

}  // namespace
}  // namespace fdrill

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_net.h"

namespace fdrill {
namespace {

using Argv = std::vector<std::string>;

std::unique_ptr<Fault> Make(FakeNetKernel& k, Json params) {
  auto f = MakeFault("link_rate", params, Host{&k, nullptr});
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(*f);
}

TEST(LinkRate, ApplyVerifyRevertVerifyWithExactArgv) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab0"}, {"rate", "100mbit"}});
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["prior_kind"], "noqueue");
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok());
  EXPECT_EQ(k.ifaces["fab0"].qdisc_kind, "tbf");
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(k.ifaces["fab0"].qdisc_kind, "noqueue");
  EXPECT_FALSE(f->Verify().ok());
  std::vector<Argv> want = {
      {"tc", "qdisc", "replace", "dev", "fab0", "root", "handle", "fd1:", "tbf", "rate", "100000000bit", "burst",
       "131072", "latency", "50ms"},
      {"tc", "qdisc", "del", "dev", "fab0", "root"},
  };
  EXPECT_EQ(k.Mutations(), want);
}

TEST(LinkRate, RevertTwiceAndRevertWithoutApplyTouchNothing) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab0"}, {"rate", "1gbit"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(k.Mutations().size(), 2u);  // one replace, one del
  ASSERT_TRUE(f->VerifyReverted().ok());
}

TEST(LinkRate, RevertAfterFailedApplyLeavesTheFoundState) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab0"}, {"rate", "100mbit"}});
  ASSERT_TRUE(f->Capture().ok());
  k.FailNext({"tc", "qdisc", "replace"}, "RTNETLINK answers: Operation not permitted\n");
  Status s = f->Apply();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Operation not permitted"), std::string::npos) << s.message();
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(k.Mutations().size(), 1u);  // only the failed replace
}

TEST(LinkRate, RefusesAQdiscItCannotRestore) {
  FakeNetKernel k;
  k.ifaces["fab0"].qdisc_kind = "htb";
  k.ifaces["fab0"].qdisc_handle = "1:";
  auto f = Make(k, {{"interface", "fab0"}, {"rate", "100mbit"}});
  Status s = f->Capture();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("htb"), std::string::npos);
  EXPECT_TRUE(k.Mutations().empty());
}

TEST(LinkRate, MissingInterfaceIsNotFoundNamingIt) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab9"}, {"rate", "100mbit"}});
  Status s = f->Capture();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("fab9"), std::string::npos);
}

TEST(LinkRate, ParamsValidateAndNameTheKey) {
  FakeNetKernel k;
  Host host{&k, nullptr};
  auto bad_unit = MakeFault("link_rate", {{"interface", "fab0"}, {"rate", "100mbps"}}, host);
  ASSERT_FALSE(bad_unit.ok());
  EXPECT_EQ(bad_unit.status().message().rfind("params.rate:", 0), 0u) << bad_unit.status().message();
  auto typo = MakeFault("link_rate", {{"interface", "fab0"}, {"rate", "1gbit"}, {"brust", "64K"}}, host);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("did you mean \"burst\""), std::string::npos) << typo.status().message();
  auto missing = MakeFault("link_rate", {{"rate", "1gbit"}}, host);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("params.interface"), std::string::npos);
  EXPECT_TRUE(k.calls.empty());
}

TEST(LinkRate, RestoredFromJournalRevertsWhatALostAgentApplied) {
  FakeNetKernel k;
  Json params = {{"interface", "fab0"}, {"rate", "100mbit"}};
  auto first = Make(k, params);
  ASSERT_TRUE(first->Capture().ok());
  Json record = {{"kind", "link_rate"}, {"params", params}, {"saved", first->Saved()}};
  ASSERT_TRUE(first->Apply().ok());
  first.reset();  // the agent died
  auto again = RestoreFault(record, Host{&k, nullptr});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE((*again)->Revert().ok());
  ASSERT_TRUE((*again)->VerifyReverted().ok());
  EXPECT_EQ(k.ifaces["fab0"].qdisc_kind, "noqueue");
}

}  // namespace
}  // namespace fdrill

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
      {"tc", "qdisc", "replace", "dev", "fab0", "root", "handle", "fd1:", "tbf", "rate",
       "100000000bit", "burst", "131072", "latency", "50ms"},
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
  EXPECT_EQ(bad_unit.status().message().rfind("params.rate:", 0), 0u)
      << bad_unit.status().message();
  auto typo =
      MakeFault("link_rate", {{"interface", "fab0"}, {"rate", "1gbit"}, {"brust", "64K"}}, host);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("did you mean \"burst\""), std::string::npos)
      << typo.status().message();
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

TEST(LinkRatePerPeer, HtbWithOneShapedClassAndAU32FilterPerPeer) {
  FakeNetKernel k;
  auto f = Make(
      k, {{"interface", "fab0"}, {"rate", "50mbit"}, {"peers", {"198.18.0.2", "198.18.1.0/24"}}});
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(f->Apply().ok());
  Status v = f->Verify();
  ASSERT_TRUE(v.ok()) << v.ToString();
  EXPECT_EQ(k.ifaces["fab0"].filters[1]["options"]["match"]["value"], "c6120100");
  EXPECT_EQ(k.ifaces["fab0"].filters[1]["options"]["match"]["mask"], "ffffff00");
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(k.ifaces["fab0"].qdisc_kind, "noqueue");
  EXPECT_TRUE(k.ifaces["fab0"].filters.empty());
  Argv filter = {"tc", "filter", "add", "dev", "fab0",  "parent", "fd1:", "protocol",
                 "ip", "prio",   "1",   "u32", "match", "ip",     "dst"};
  Argv to_peer = filter, to_net = filter;
  for (const char* a : {"198.18.0.2", "flowid", "fd1:1"}) to_peer.push_back(a);
  for (const char* a : {"198.18.1.0/24", "flowid", "fd1:1"}) to_net.push_back(a);
  std::vector<Argv> want = {
      {"tc", "qdisc", "replace", "dev", "fab0", "root", "handle", "fd1:", "htb", "default", "0"},
      {"tc", "class", "replace", "dev", "fab0", "parent", "fd1:", "classid", "fd1:1", "htb", "rate",
       "50000000bit", "ceil", "50000000bit", "burst", "131072", "cburst", "131072"},
      to_peer,
      to_net,
      {"tc", "qdisc", "del", "dev", "fab0", "root"},
  };
  EXPECT_EQ(k.Mutations(), want);
}

TEST(LinkRatePerPeer, VerifyReadsTheClassRateAndEveryFilter) {
  FakeNetKernel k;
  auto f =
      Make(k, {{"interface", "fab0"}, {"rate", "50mbit"}, {"peers", "198.18.0.2, 198.18.0.3"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok());
  Json all = k.ifaces["fab0"].filters;
  k.ifaces["fab0"].filters.erase(1);
  Status s = f->Verify();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("198.18.0.3"), std::string::npos) << s.message();
  k.ifaces["fab0"].filters = all;
  k.ifaces["fab0"].classes = {
      "class htb fd1:1 root prio 0 rate 10Mbit ceil 10Mbit burst 1600b cburst 1600b "};
  s = f->Verify();
  EXPECT_NE(s.message().find("10000000 bit/s"), std::string::npos) << s.message();
  k.ifaces["fab0"].classes.clear();
  EXPECT_NE(f->Verify().message().find("missing"), std::string::npos);
}

TEST(LinkRatePerPeer, RevertAfterAFailedFilterRemovesTheWholeQdisc) {
  FakeNetKernel k;
  auto f = Make(k, {{"interface", "fab0"}, {"rate", "50mbit"}, {"peers", {"198.18.0.2"}}});
  ASSERT_TRUE(f->Capture().ok());
  k.FailNext({"tc", "filter", "add"}, "Error: TC classifier not found.\n");
  Status s = f->Apply();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("classifier not found"), std::string::npos) << s.message();
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(k.ifaces["fab0"].qdisc_kind, "noqueue");
}

TEST(LinkRatePerPeer, ParamsNameTheKey) {
  FakeNetKernel k;
  Host host{&k, nullptr};
  for (const auto& [params, key] : std::vector<std::pair<Json, std::string>>{
           {{{"interface", "fab0"}, {"rate", "1gbit"}, {"peers", Json::array()}}, "peers"},
           {{{"interface", "fab0"}, {"rate", "1gbit"}, {"peers", {"n2"}}}, "peers"},
           {{{"interface", "fab0"},
             {"rate", "1gbit"},
             {"peers", {"198.18.0.2"}},
             {"latency", "10ms"}},
            "latency"}}) {
    auto f = MakeFault("link_rate", params, host);
    ASSERT_FALSE(f.ok()) << params.dump();
    EXPECT_EQ(f.status().message().rfind("params." + key + ":", 0), 0u) << f.status().message();
  }
  EXPECT_TRUE(k.calls.empty());
}

TEST(LinkRatePerPeer, RestoredFromJournalRevertsTheHtbTree) {
  FakeNetKernel k;
  Json params = {{"interface", "fab0"}, {"rate", "50mbit"}, {"peers", {"198.18.0.2"}}};
  auto first = Make(k, params);
  ASSERT_TRUE(first->Capture().ok());
  Json record = {{"kind", "link_rate"}, {"params", params}, {"saved", first->Saved()}};
  ASSERT_TRUE(first->Apply().ok());
  first.reset();
  auto again = RestoreFault(record, Host{&k, nullptr});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE((*again)->Revert().ok());
  ASSERT_TRUE((*again)->VerifyReverted().ok());
  EXPECT_EQ(k.ifaces["fab0"].qdisc_kind, "noqueue");
}

}  // namespace
}  // namespace fdrill

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_iptables.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

TEST(LinkPartition, DropsBothWaysPerPeerThenRevertsExactly) {
  FakeIptablesNode rig;
  auto f = MakeOk("link_partition",
                  {{"peers", {"198.18.0.2", "198.18.0.3"}}, {"interface", "fab0"}}, rig.host());
  EXPECT_EQ(f->Target(), "fab0");
  ASSERT_TRUE(f->Capture().ok());
  std::string c = f->Saved()["chain"];
  EXPECT_EQ(c.rfind("FDRILL-PART-", 0), 0u);
  ASSERT_TRUE(AppliedAndVerified(*f));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_FALSE(f->Verify().ok());
  EXPECT_TRUE(rig.ipt.tables.empty());
  const Argv tag = {"-m", "comment", "--comment", "fdrill:link_partition", "-j", c};
  auto with_tag = [&](Argv a) {
    a.insert(a.end(), tag.begin(), tag.end());
    return a;
  };
  std::vector<Argv> want = {
      Iptables({"-N", c}),
      Iptables({"-A", c, "-s", "198.18.0.2", "-j", "DROP"}),
      Iptables({"-A", c, "-d", "198.18.0.2", "-j", "DROP"}),
      Iptables({"-A", c, "-s", "198.18.0.3", "-j", "DROP"}),
      Iptables({"-A", c, "-d", "198.18.0.3", "-j", "DROP"}),
      Iptables(with_tag({"-I", "INPUT", "1", "-i", "fab0"})),
      Iptables(with_tag({"-I", "OUTPUT", "1", "-o", "fab0"})),
      Iptables(with_tag({"-D", "INPUT", "-i", "fab0"})),
      Iptables(with_tag({"-D", "OUTPUT", "-o", "fab0"})),
  };
  want = ThenChainRemoved(want, c);
  EXPECT_EQ(rig.ipt.Mutations(), want);
}

TEST(LinkPartition, WithoutAnInterfaceItHooksEveryInterfaceAndTargetsThePeers) {
  FakeIptablesNode rig;
  auto f = MakeOk("link_partition", {{"peers", "198.18.0.2, 198.18.0.4"}}, rig.host());
  EXPECT_EQ(f->Target(), "peers:198.18.0.2,198.18.0.4");
  ASSERT_TRUE(CapturedAndApplied(*f));
  std::string c = f->Saved()["chain"];
  EXPECT_EQ(rig.ipt.tables.at("filter").chains.at("INPUT").rules,
            (std::vector<Argv>{{"-m", "comment", "--comment", "fdrill:link_partition", "-j", c}}));
  ASSERT_TRUE(f->Verify().ok());
  ASSERT_TRUE(Reverted(*f));
}

TEST(LinkPartition, RevertAfterFailedApplyRemovesTheHalfHookedChain) {
  FakeIptablesNode rig;
  ASSERT_EQ(rig.ipt.Run(Iptables({"-A", "INPUT", "-p", "icmp", "-j", "ACCEPT"}), {})->exit_code, 0);
  auto before = rig.ipt.Dump();
  auto f = MakeOk("link_partition", {{"peers", {"198.18.0.2"}}}, rig.host());
  ASSERT_TRUE(f->Capture().ok());
  rig.ipt.FailNext(Iptables({"-I", "OUTPUT"}), "iptables: Resource temporarily unavailable.\n");
  ASSERT_FALSE(f->Apply().ok());  // INPUT hooked, OUTPUT not
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(rig.ipt.Dump(), before);
}

TEST(LinkPartition, RevertTwiceAndRevertWithoutApplyTouchNothingMore) {
  FakeIptablesNode rig;
  auto f = MakeOk("link_partition", {{"peers", {"198.18.0.2"}}}, rig.host());
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, rig.ipt));
}

TEST(LinkPartition, ParamsValidateAndNameTheKey) {
  FakeIptablesNode rig;
  auto expect_key = [&](const Json& params, const std::string& key, const std::string& words = "") {
    EXPECT_TRUE(RefusedNaming("link_partition", params, rig.host(), key, words));
  };
  expect_key(Json::object(), "peers", "required");
  expect_key({{"peers", Json::array()}}, "peers", "empty");
  expect_key({{"peers", {"198.18.0.2", "198.18.0.2"}}}, "peers", "twice");
  expect_key({{"peers", {"198.18.0.300"}}}, "peers", "198.18.0.300");
  expect_key({{"peers", {"fd00::1"}}}, "peers", "IPv6");
  expect_key({{"peers", 5}}, "peers", "list");
  expect_key({{"peers", {"198.18.0.2/33"}}}, "peers", "prefix");
  expect_key({{"peers", {"198.18.0.2"}}, {"interface", ""}}, "interface");
  expect_key({{"peers", {"198.18.0.2"}}, {"peer", "198.18.0.3"}}, "peer", "did you mean \"peers\"");
  EXPECT_TRUE(rig.ipt.calls.empty());
}

TEST(LinkPartition, RestoredFromJournalRevertsWhatALostAgentApplied) {
  FakeIptablesNode rig;
  Json record = JournalApplyAndDie("link_partition",
                                   {{"peers", {"198.18.0.2"}}, {"interface", "fab0"}}, rig.host());
  ASSERT_TRUE(Reverted(*Restore(record, rig.host())));
  EXPECT_TRUE(rig.ipt.tables.empty());
}

}  // namespace
}  // namespace fdrill

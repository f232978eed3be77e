// link_loss's ingress mechanism (an iptables chain in raw PREROUTING) against
// FakeIptables; its egress mechanism is in link_loss_egress_test.cc.
#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_iptables.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

TEST(LinkLoss, ApplyVerifyRevertVerifyWithExactArgv) {
  FakeIptablesNode rig;
  auto f =
      MakeOk("link_loss", {{"interface", "fab0"}, {"percent", "1.5%"}, {"direction", "ingress"}},
             rig.host());
  ASSERT_TRUE(f->Capture().ok());
  std::string chain = f->Saved()["chain"];
  EXPECT_EQ(chain.rfind("FDRILL-LOSS-", 0), 0u);
  EXPECT_EQ(chain.size(), 20u);
  EXPECT_FALSE(
      f->Saved()["table_existed"].get<bool>());  // a fresh namespace has no filter table yet
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_FALSE(f->VerifyReverted().ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_FALSE(f->Verify().ok());
  EXPECT_TRUE(rig.ipt.tables.empty());  // the table it created is gone again
  Argv jump = {"PREROUTING",       "-i", "fab0", "-m", "comment", "--comment",
               "fdrill:link_loss", "-j", chain};
  Argv insert = {"-I", "PREROUTING", "1"}, del = {"-D"};
  insert.insert(insert.end(), jump.begin() + 1, jump.end());
  del.insert(del.end(), jump.begin(), jump.end());
  std::vector<Argv> want = ThenChainRemoved(
      {
          Iptables({"-N", chain}, "raw"),
          Iptables({"-A", chain, "-m", "statistic", "--mode", "random", "--probability", "0.015",
                    "-j", "DROP"},
                   "raw"),
          Iptables(insert, "raw"),
          Iptables(del, "raw"),
      },
      chain, "raw");
  EXPECT_EQ(rig.ipt.Mutations(), want);
}

TEST(LinkLoss, IngressPerPeerUsesRawPreroutingAndHundredPercentIsAPlainDrop) {
  FakeIptablesNode rig;
  auto f = MakeOk(
      "link_loss",
      {{"interface", "fab0"}, {"percent", 100}, {"direction", "ingress"}, {"peer", "198.18.0.2"}},
      rig.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Verify().ok());
  std::string chain = f->Saved()["chain"];
  auto& raw = rig.ipt.tables.at("raw");
  EXPECT_EQ(raw.chains.at(chain).rules, (std::vector<Argv>{{"-s", "198.18.0.2", "-j", "DROP"}}));
  EXPECT_EQ(raw.chains.at("PREROUTING").rules,
            (std::vector<Argv>{
                {"-i", "fab0", "-m", "comment", "--comment", "fdrill:link_loss", "-j", chain}}));
  EXPECT_FALSE(rig.ipt.tables.count("filter"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_TRUE(rig.ipt.tables.empty());
}

TEST(LinkLoss, LeavesATableItFoundAndOthersRulesAsTheyWere) {
  FakeIptablesNode rig;
  ASSERT_EQ(rig.ipt.Run(Iptables({"-A", "PREROUTING", "-p", "tcp", "-j", "ACCEPT"}, "raw"), {})
                ->exit_code,
            0);
  auto before = rig.ipt.Dump();
  auto f = MakeOk("link_loss", {{"interface", "fab0"}, {"percent", 5}, {"direction", "ingress"}},
                  rig.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_TRUE(f->Saved()["table_existed"].get<bool>());
  ASSERT_TRUE(f->Apply().ok());
  // Inserted first, so an earlier ACCEPT cannot bypass it.
  EXPECT_EQ(rig.ipt.tables.at("raw").chains.at("PREROUTING").rules.front().back(),
            f->Saved()["chain"]);
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(rig.ipt.Dump(), before);
  EXPECT_TRUE(rig.ipt.CallsTo("nft").empty());
}

TEST(LinkLoss, RevertAfterFailedApplyRemovesThePartialChain) {
  FakeIptablesNode rig;
  auto f = MakeOk("link_loss", {{"interface", "fab0"}, {"percent", 10}, {"direction", "ingress"}},
                  rig.host());
  ASSERT_TRUE(f->Capture().ok());
  rig.ipt.FailNext(Iptables({"-I"}, "raw"), "iptables: Resource temporarily unavailable.\n");
  ASSERT_TRUE(ErrorContains(f->Apply(), "Resource temporarily unavailable"));
  EXPECT_EQ(rig.ipt.tables.at("raw").chains.count(f->Saved()["chain"]), 1u);  // -N and -A ran
  ASSERT_TRUE(Reverted(*f));
  EXPECT_TRUE(rig.ipt.tables.empty());
}

TEST(LinkLoss, RevertWithoutApplyAndRevertTwiceChangeNothingMore) {
  FakeIptablesNode rig;
  auto f = MakeOk("link_loss", {{"interface", "fab0"}, {"percent", 10}, {"direction", "ingress"}},
                  rig.host());
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, rig.ipt));
}

TEST(LinkLoss, RefusesAChainAlreadyThere) {
  FakeIptablesNode rig;
  Json params = {{"interface", "fab0"}, {"percent", 10}, {"direction", "ingress"}};
  auto first = MakeOk("link_loss", params, rig.host());
  ASSERT_TRUE(CapturedAndApplied(*first));
  auto second = MakeOk("link_loss", params, rig.host());
  EXPECT_TRUE(ErrorContains(second->Capture(), StatusCode::kFailedPrecondition,
                            first->Saved()["chain"].get<std::string>()));
  // A different fault on the same interface gets a chain of its own.
  auto other = MakeOk(
      "link_loss", {{"interface", "fab0"}, {"percent", 20}, {"direction", "ingress"}}, rig.host());
  EXPECT_TRUE(other->Capture().ok());
}

TEST(LinkLoss, MissingInterfaceIsNotFoundNamingIt) {
  FakeIptablesNode rig;
  auto f = MakeOk("link_loss", {{"interface", "fab9"}, {"percent", 10}, {"direction", "ingress"}},
                  rig.host());
  EXPECT_TRUE(ErrorContains(f->Capture(), StatusCode::kNotFound, "fab9"));
}

TEST(LinkLoss, ParamsValidateAndNameTheKey) {
  FakeIptablesNode rig;
  auto expect_key = [&](const Json& params, const std::string& key) {
    EXPECT_TRUE(RefusedNaming("link_loss", params, rig.host(), key));
  };
  expect_key({{"interface", "fab0"}}, "percent");
  expect_key({{"interface", "fab0"}, {"percent", 0}}, "percent");
  expect_key({{"interface", "fab0"}, {"percent", 101}}, "percent");
  expect_key({{"interface", "fab0"}, {"percent", "1.5 percent"}}, "percent");
  expect_key({{"interface", "fab0"}, {"percent", "0.0000001"}}, "percent");
  expect_key({{"percent", 1}}, "interface");
  expect_key({{"interface", "fab0"}, {"percent", 1}, {"direction", "both"}}, "direction");
  expect_key({{"interface", "fab0"}, {"percent", 1}, {"peer", "n2"}}, "peer");
  expect_key({{"interface", "fab0"}, {"percent", 1}, {"peer", "fd00::2"}}, "peer");
  EXPECT_TRUE(ErrorContains(
      ParamsError("link_loss", {{"interface", "fab0"}, {"precent", 1}, {"percent", 1}}, rig.host()),
      "did you mean \"percent\""));
  EXPECT_TRUE(rig.ipt.calls.empty());
}

TEST(LinkLoss, RestoredFromJournalRevertsWhatALostAgentApplied) {
  FakeIptablesNode rig;
  Json record = JournalApplyAndDie(
      "link_loss", {{"interface", "fab0"}, {"percent", 3}, {"direction", "ingress"}}, rig.host());
  ASSERT_TRUE(Reverted(*Restore(record, rig.host())));
  EXPECT_TRUE(rig.ipt.tables.empty());
}

TEST(LinkLoss, LegacyBackendAndMissingNftLeaveTablesAlone) {
  FakeIptablesNode legacy;
  legacy.ipt.legacy = true;
  auto f = MakeOk("link_loss", {{"interface", "fab0"}, {"percent", 3}, {"direction", "ingress"}},
                  legacy.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_TRUE(legacy.ipt.CallsTo("nft").empty());

  FakeIptablesNode no_nft;
  no_nft.ipt.have_nft = false;
  auto g = MakeOk("link_loss", {{"interface", "fab0"}, {"percent", 3}, {"direction", "ingress"}},
                  no_nft.host());
  ASSERT_TRUE(CapturedAndApplied(*g));
  ASSERT_TRUE(Reverted(*g));  // an empty, accepting table is left; nothing of ours is
  EXPECT_TRUE(no_nft.ipt.tables.at("raw").chains.at("PREROUTING").rules.empty());
}

TEST(LinkLoss, MechanismListsTheChainAndTouchesNothing) {
  FakeIptablesNode rig;
  auto f = MakeOk("link_loss", {{"interface", "fab0"}, {"percent", 1}, {"direction", "ingress"}},
                  rig.host());
  auto lines = f->Mechanism();
  ASSERT_GE(lines.size(), 4u);
  EXPECT_NE(lines[1].find("-m statistic --mode random --probability 0.01 -j DROP"),
            std::string::npos)
      << lines[1];
  EXPECT_TRUE(rig.ipt.calls.empty());
}

}  // namespace
}  // namespace fdrill

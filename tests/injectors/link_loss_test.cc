#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_iptables.h"
#include "tests/fakes/fake_net.h"

namespace fdrill {
namespace {

using Argv = std::vector<std::string>;

struct Rig {
  FakeNetKernel kernel;
  FakeIptables ipt{&kernel};
  Host host() { return Host{&ipt, nullptr}; }
};

std::unique_ptr<Fault> Make(Rig& rig, const Json& params) {
  auto f = MakeFault("link_loss", params, rig.host());
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(*f);
}

Argv Ipt(const std::string& table, Argv args) {
  Argv argv = {"iptables", "-w", "5", "-t", table};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

TEST(LinkLoss, ApplyVerifyRevertVerifyWithExactArgv) {
  Rig rig;
  auto f = Make(rig, {{"interface", "fab0"}, {"percent", "1.5%"}});
  ASSERT_TRUE(f->Capture().ok());
  std::string chain = f->Saved()["chain"];
  EXPECT_EQ(chain.rfind("FDRILL-LOSS-", 0), 0u);
  EXPECT_EQ(chain.size(), 20u);
  EXPECT_FALSE(
      f->Saved()["table_existed"].get<bool>());  // a fresh namespace has no filter table yet
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok()) << f->Verify().ToString();
  EXPECT_FALSE(f->VerifyReverted().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_FALSE(f->Verify().ok());
  EXPECT_TRUE(rig.ipt.tables.empty());  // the table it created is gone again
  Argv jump = {"OUTPUT",           "-o", "fab0", "-m", "comment", "--comment",
               "fdrill:link_loss", "-j", chain};
  Argv insert = {"-I", "OUTPUT", "1"}, del = {"-D"};
  insert.insert(insert.end(), jump.begin() + 1, jump.end());
  del.insert(del.end(), jump.begin(), jump.end());
  std::vector<Argv> want = {
      Ipt("filter", {"-N", chain}),
      Ipt("filter", {"-A", chain, "-m", "statistic", "--mode", "random", "--probability", "0.015",
                     "-j", "DROP"}),
      Ipt("filter", insert),
      Ipt("filter", del),
      Ipt("filter", {"-F", chain}),
      Ipt("filter", {"-X", chain}),
      {"nft", "delete", "table", "ip", "filter"},
  };
  EXPECT_EQ(rig.ipt.Mutations(), want);
}

TEST(LinkLoss, IngressPerPeerUsesRawPreroutingAndHundredPercentIsAPlainDrop) {
  Rig rig;
  auto f = Make(
      rig,
      {{"interface", "fab0"}, {"percent", 100}, {"direction", "ingress"}, {"peer", "198.18.0.2"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok());
  std::string chain = f->Saved()["chain"];
  auto& raw = rig.ipt.tables.at("raw");
  EXPECT_EQ(raw.chains.at(chain).rules, (std::vector<Argv>{{"-s", "198.18.0.2", "-j", "DROP"}}));
  EXPECT_EQ(raw.chains.at("PREROUTING").rules,
            (std::vector<Argv>{
                {"-i", "fab0", "-m", "comment", "--comment", "fdrill:link_loss", "-j", chain}}));
  EXPECT_FALSE(rig.ipt.tables.count("filter"));
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_TRUE(rig.ipt.tables.empty());
}

TEST(LinkLoss, EgressToOnePeerMatchesItsDestination) {
  Rig rig;
  auto f = Make(rig, {{"interface", "fab0"}, {"percent", 0.25}, {"peer", "198.18.0.0/24"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  std::string chain = f->Saved()["chain"];
  EXPECT_EQ(rig.ipt.tables.at("filter").chains.at(chain).rules,
            (std::vector<Argv>{{"-d", "198.18.0.0/24", "-m", "statistic", "--mode", "random",
                                "--probability", "0.0025", "-j", "DROP"}}));
}

TEST(LinkLoss, LeavesATableItFoundAndOthersRulesAsTheyWere) {
  Rig rig;
  ASSERT_EQ(
      rig.ipt.Run(Ipt("filter", {"-A", "OUTPUT", "-p", "tcp", "-j", "ACCEPT"}), {})->exit_code, 0);
  auto before = rig.ipt.Dump();
  auto f = Make(rig, {{"interface", "fab0"}, {"percent", 5}});
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_TRUE(f->Saved()["table_existed"].get<bool>());
  ASSERT_TRUE(f->Apply().ok());
  // Inserted first, so an earlier ACCEPT cannot bypass it.
  EXPECT_EQ(rig.ipt.tables.at("filter").chains.at("OUTPUT").rules.front().back(),
            f->Saved()["chain"]);
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(rig.ipt.Dump(), before);
  EXPECT_TRUE(rig.ipt.CallsTo("nft").empty());
}

TEST(LinkLoss, RevertAfterFailedApplyRemovesThePartialChain) {
  Rig rig;
  auto f = Make(rig, {{"interface", "fab0"}, {"percent", 10}});
  ASSERT_TRUE(f->Capture().ok());
  rig.ipt.FailNext(Ipt("filter", {"-I"}), "iptables: Resource temporarily unavailable.\n");
  Status s = f->Apply();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Resource temporarily unavailable"), std::string::npos) << s.message();
  EXPECT_EQ(rig.ipt.tables.at("filter").chains.count(f->Saved()["chain"]), 1u);  // -N and -A ran
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_TRUE(rig.ipt.tables.empty());
}

TEST(LinkLoss, RevertWithoutApplyAndRevertTwiceChangeNothingMore) {
  Rig rig;
  auto f = Make(rig, {{"interface", "fab0"}, {"percent", 10}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_TRUE(rig.ipt.Mutations().empty());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  size_t after_first = rig.ipt.Mutations().size();
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(rig.ipt.Mutations().size(), after_first);
  ASSERT_TRUE(f->VerifyReverted().ok());
}

TEST(LinkLoss, RefusesAChainAlreadyThere) {
  Rig rig;
  Json params = {{"interface", "fab0"}, {"percent", 10}};
  auto first = Make(rig, params);
  ASSERT_TRUE(first->Capture().ok());
  ASSERT_TRUE(first->Apply().ok());
  auto second = Make(rig, params);
  Status s = second->Capture();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find(first->Saved()["chain"].get<std::string>()), std::string::npos)
      << s.message();
  // A different fault on the same interface gets a chain of its own.
  auto other = Make(rig, {{"interface", "fab0"}, {"percent", 20}});
  EXPECT_TRUE(other->Capture().ok());
}

TEST(LinkLoss, MissingInterfaceIsNotFoundNamingIt) {
  Rig rig;
  auto f = Make(rig, {{"interface", "fab9"}, {"percent", 10}});
  Status s = f->Capture();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("fab9"), std::string::npos);
}

TEST(LinkLoss, ParamsValidateAndNameTheKey) {
  Rig rig;
  auto expect_key = [&](const Json& params, const std::string& key) {
    auto f = MakeFault("link_loss", params, rig.host());
    ASSERT_FALSE(f.ok()) << params.dump();
    EXPECT_EQ(f.status().message().rfind("params." + key + ":", 0), 0u) << f.status().message();
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
  auto typo =
      MakeFault("link_loss", {{"interface", "fab0"}, {"precent", 1}, {"percent", 1}}, rig.host());
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("did you mean \"percent\""), std::string::npos)
      << typo.status().message();
  EXPECT_TRUE(rig.ipt.calls.empty());
}

TEST(LinkLoss, RestoredFromJournalRevertsWhatALostAgentApplied) {
  Rig rig;
  Json params = {{"interface", "fab0"}, {"percent", 3}};
  auto first = Make(rig, params);
  ASSERT_TRUE(first->Capture().ok());
  Json record = {{"kind", "link_loss"}, {"params", params}, {"saved", first->Saved()}};
  ASSERT_TRUE(first->Apply().ok());
  first.reset();  // the agent died
  auto again = RestoreFault(record, rig.host());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE((*again)->Revert().ok());
  ASSERT_TRUE((*again)->VerifyReverted().ok());
  EXPECT_TRUE(rig.ipt.tables.empty());
}

TEST(LinkLoss, LegacyBackendAndMissingNftLeaveTablesAlone) {
  Rig legacy;
  legacy.ipt.legacy = true;
  auto f = Make(legacy, {{"interface", "fab0"}, {"percent", 3}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_TRUE(legacy.ipt.CallsTo("nft").empty());

  Rig no_nft;
  no_nft.ipt.have_nft = false;
  auto g = Make(no_nft, {{"interface", "fab0"}, {"percent", 3}});
  ASSERT_TRUE(g->Capture().ok());
  ASSERT_TRUE(g->Apply().ok());
  ASSERT_TRUE(g->Revert().ok());
  ASSERT_TRUE(g->VerifyReverted().ok());  // an empty, accepting table is left; nothing of ours is
  EXPECT_TRUE(no_nft.ipt.tables.at("filter").chains.at("OUTPUT").rules.empty());
}

TEST(LinkLoss, MechanismListsTheChainAndTouchesNothing) {
  Rig rig;
  auto f = Make(rig, {{"interface", "fab0"}, {"percent", 1}});
  auto lines = f->Mechanism();
  ASSERT_GE(lines.size(), 4u);
  EXPECT_NE(lines[1].find("-m statistic --mode random --probability 0.01 -j DROP"),
            std::string::npos)
      << lines[1];
  EXPECT_TRUE(rig.ipt.calls.empty());
}

}  // namespace
}  // namespace fdrill

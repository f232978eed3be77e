// link_loss's egress mechanism (injectors/egress_loss.h) against FakeNft over
// FakeNetKernel: a netdev table of the fault's own whose egress rule forwards
// the share to a veth of the fault's own with its peer down.
#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_nft.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

struct Node {
  Node() : nft(&net) {}
  FakeNetKernel net;
  FakeNft nft;
  // The fault's table and hole, by the one name each the fault uses.
  std::string Table() const {
    for (const auto& [name, t] : nft.tables)
      if (t.family == "netdev") return name;
    return "";
  }
  std::vector<Argv> Writes() const {
    std::vector<Argv> out;
    for (const auto& c : net.calls)
      if (c.size() > 2 && c[0] == "ip" && c[1] == "link" && c[2] != "show") out.push_back(c);
    for (const auto& c : nft.calls)
      if (c[1] == "add" || c[1] == "delete") out.push_back(c);
    return out;
  }
};

TEST(LinkLossEgress, ForwardsTheShareToItsOwnDownVethAndGoesWithoutTrace) {
  Node n;
  auto f = MakeOk("link_loss", {{"interface", "fab0"}, {"percent", "1.5%"}}, n.nft.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(AppliedAndVerified(*f));
  const std::string table = n.Table();
  ASSERT_EQ(table.rfind("fdrill_loss_", 0), 0u);
  const std::string hash = table.substr(12);
  ASSERT_EQ(hash.size(), 8u);
  const std::string hole = "fdrill" + hash;
  ASSERT_TRUE(n.net.ifaces.count(hole));
  EXPECT_TRUE(n.net.ifaces.at(hole).up);
  EXPECT_FALSE(n.net.ifaces.at(hole + "p").up);  // the peer stays down: what reaches hole is gone
  EXPECT_FALSE(f->VerifyReverted().ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_TRUE(n.nft.tables.empty());
  EXPECT_FALSE(n.net.ifaces.count(hole));
  EXPECT_FALSE(n.net.ifaces.count(hole + "p"));
  // The interface names must fit IFNAMSIZ (15 characters).
  EXPECT_LE((hole + "p").size(), 15u);
  std::vector<Argv> want = {
      {"ip", "link", "add", hole, "type", "veth", "peer", "name", hole + "p"},
      {"ip", "link", "set", "dev", hole, "up"},
      {"ip", "link", "del", hole},
      {"nft", "add", "table", "netdev", table},
      {"nft", "add", "chain", "netdev", table, "egress",
       "{ type filter hook egress device \"fab0\" priority 0 ; policy accept ; }"},
      {"nft", "add", "rule", "netdev", table, "egress", "numgen", "random", "mod", "100000000",
       "lt", "1500000", "counter", "fwd", "to", hole},
      {"nft", "delete", "table", "netdev", table},
  };
  EXPECT_EQ(n.Writes(), want);
}

TEST(LinkLossEgress, ToOnePeerMatchesItsDestinationAndAHundredPercentTakesAll) {
  Node n;
  auto f = MakeOk("link_loss", {{"interface", "fab0"}, {"percent", 100}, {"peer", "198.18.0.0/24"}},
                  n.nft.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Verify().ok());
  const auto& rule = n.nft.tables.at(n.Table()).rules.at(0).second;
  EXPECT_EQ(rule, (Argv{"ip", "daddr", "198.18.0.0/24", "counter", "fwd", "to",
                        "fdrill" + n.Table().substr(12)}));
}

TEST(LinkLossEgress, VerifyFailsWhenTheRuleOrTheHoleIsNotWhatItMade) {
  Node n;
  auto f = MakeOk("link_loss", {{"interface", "fab0"}, {"percent", 10}}, n.nft.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Verify().ok());
  auto& rule = n.nft.tables.at(n.Table()).rules.at(0).second;
  rule[rule.size() - 1] = "lo";  // forwards somewhere else
  EXPECT_TRUE(ErrorContains(f->Verify(), "holds no egress rule sending 10% of fab0's packets"));
  ASSERT_TRUE(Reverted(*f));
}

TEST(LinkLossEgress, RefusesATableOrAHoleAlreadyThereAndAMissingInterface) {
  Node n;
  Json params = {{"interface", "fab0"}, {"percent", 10}};
  auto first = MakeOk("link_loss", params, n.nft.host());
  ASSERT_TRUE(CapturedAndApplied(*first));
  auto second = MakeOk("link_loss", params, n.nft.host());
  EXPECT_TRUE(ErrorContains(second->Capture(), StatusCode::kFailedPrecondition,
                            "nft table netdev " + n.Table() + " already exists"));
  // Only the hole left (a table deleted by hand): still refused, naming it.
  const std::string hole = "fdrill" + n.Table().substr(12);
  n.nft.tables.clear();
  EXPECT_TRUE(ErrorContains(second->Capture(), StatusCode::kFailedPrecondition,
                            "interface " + hole + " already exists"));
  // A different fault on the same interface has names of its own.
  auto other = MakeOk("link_loss", {{"interface", "fab0"}, {"percent", 20}}, n.nft.host());
  EXPECT_TRUE(other->Capture().ok());
  auto missing = MakeOk("link_loss", {{"interface", "fab9"}, {"percent", 10}}, n.nft.host());
  EXPECT_TRUE(ErrorContains(missing->Capture(), StatusCode::kNotFound, "fab9"));
}

TEST(LinkLossEgress, RevertIsSafeUnappliedTwiceAndAfterAFailedChain) {
  Node n;
  auto f = MakeOk("link_loss", {{"interface", "fab0"}, {"percent", 5}}, n.nft.host());
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Revert().ok());  // nothing applied
  EXPECT_TRUE(n.Writes().empty());
  // The hole and the table made, then the chain refused (a kernel without the egress hook).
  n.nft.FailNext({"nft", "add", "chain"}, "Error: Could not process rule: Not supported\n");
  Status applied = f->Apply();
  EXPECT_FALSE(applied.ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_TRUE(n.nft.tables.empty());
  ASSERT_EQ(n.net.ifaces.size(), 3u);  // lo, mgmt0, fab0
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
}

TEST(LinkLossEgress, RestoredFromJournalDeletesTheTableAndTheHole) {
  Node n;
  Json record =
      JournalApplyAndDie("link_loss", {{"interface", "fab0"}, {"percent", 3}}, n.nft.host());
  ASSERT_FALSE(n.Table().empty());
  ASSERT_TRUE(Reverted(*Restore(record, n.nft.host())));
  EXPECT_TRUE(n.nft.tables.empty());
  EXPECT_EQ(n.net.ifaces.size(), 3u);
}

TEST(LinkLossEgress, MechanismListsTheStepsAndTouchesNothing) {
  Node n;
  auto f = MakeOk("link_loss", {{"interface", "fab0"}, {"percent", 1}}, n.nft.host());
  auto lines = f->Mechanism();
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_NE(lines[4].find("numgen random mod 100000000 lt 1000000 counter fwd to fdrill"),
            std::string::npos)
      << lines[4];
  EXPECT_EQ(lines[6].rfind("revert: ip link del fdrill", 0), 0u) << lines[6];
  EXPECT_TRUE(n.nft.calls.empty());
  EXPECT_TRUE(n.net.calls.empty());
}

}  // namespace
}  // namespace fdrill

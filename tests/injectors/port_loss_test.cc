// port_loss against FakeNft over FakeNetKernel: a leaf whose up0 is a port
// of br0, and a node-style fab0 on no bridge.
#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_nft.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

struct Leaf {
  Leaf() : nft(&net) {
    net.ifaces["br0"] = FakeNetKernel::Iface{};
    net.ifaces["up0"] = FakeNetKernel::Iface{};
    net.ifaces["up0"].master = "br0";
  }
  FakeNetKernel net;
  FakeNft nft;
};

TEST(PortLoss, OwnBridgeTableDropsTheShareOutOfThePortAndGoes) {
  Leaf l;
  auto f = MakeOk("port_loss", {{"interface", "up0"}, {"percent", 1.5}}, l.nft.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(AppliedAndVerified(*f));
  ASSERT_TRUE(l.nft.tables.count("fdrill_loss_up0"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_TRUE(l.nft.tables.empty());
  std::vector<Argv> writes;
  for (const auto& c : l.nft.calls)
    if (c[1] == "add" || c[1] == "delete") writes.push_back(c);
  std::vector<Argv> want = {
      {"nft", "add", "table", "bridge", "fdrill_loss_up0"},
      {"nft", "add", "chain", "bridge", "fdrill_loss_up0", "forward",
       "{ type filter hook forward priority 0 ; policy accept ; }"},
      {"nft", "add", "rule", "bridge", "fdrill_loss_up0", "forward", "oifname", "up0", "numgen",
       "random", "mod", "100000000", "lt", "1500000", "counter", "drop"},
      {"nft", "delete", "table", "bridge", "fdrill_loss_up0"},
  };
  EXPECT_EQ(writes, want);
}

TEST(PortLoss, AHundredPercentIsAPlainDrop) {
  Leaf l;
  auto f = MakeOk("port_loss", {{"interface", "up0"}, {"percent", 100}}, l.nft.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Verify().ok());
  EXPECT_EQ(l.nft.tables["fdrill_loss_up0"].rules.at(0).second,
            (Argv{"oifname", "up0", "counter", "drop"}));
}

TEST(PortLoss, RevertIsSafeUnappliedTwiceAndAfterAFailedRule) {
  Leaf l;
  auto f = MakeOk("port_loss", {{"interface", "up0"}, {"percent", 5}}, l.nft.host());
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Revert().ok());                      // nothing applied
  l.nft.tables["fdrill_loss_up0"].family = "bridge";  // the table made, then the chain fails
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_TRUE(l.nft.tables.empty());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
}

TEST(PortLoss, RefusesAnInterfaceOnNoBridgeAndATableAlreadyThere) {
  Leaf l;
  auto f = MakeOk("port_loss", {{"interface", "fab0"}, {"percent", 5}}, l.nft.host());
  EXPECT_TRUE(ErrorContains(f->Capture(), StatusCode::kFailedPrecondition,
                            "fab0 is on no bridge; port_loss is for a switch's ports"));
  auto g = MakeOk("port_loss", {{"interface", "up9"}, {"percent", 5}}, l.nft.host());
  EXPECT_TRUE(ErrorContains(g->Capture(), StatusCode::kNotFound, "up9"));
  l.nft.tables["fdrill_loss_up0"].family = "bridge";
  auto h = MakeOk("port_loss", {{"interface", "up0"}, {"percent", 5}}, l.nft.host());
  EXPECT_TRUE(ErrorContains(h->Capture(), "nft table bridge fdrill_loss_up0 already exists"));
}

TEST(PortLoss, RestoredFromJournalDeletesTheTable) {
  Leaf l;
  Json record =
      JournalApplyAndDie("port_loss", {{"interface", "up0"}, {"percent", 5}}, l.nft.host());
  ASSERT_TRUE(l.nft.tables.count("fdrill_loss_up0"));
  ASSERT_TRUE(Reverted(*Restore(record, l.nft.host())));
  EXPECT_TRUE(l.nft.tables.empty());
}

TEST(PortLoss, ParamsNameTheKey) {
  Leaf l;
  EXPECT_TRUE(
      RefusedNaming("port_loss", {{"interface", "up0"}, {"percent", 0}}, l.nft.host(), "percent"));
  EXPECT_TRUE(RefusedNaming("port_loss", {{"interface", "up-0"}, {"percent", 5}}, l.nft.host(),
                            "interface"));
  EXPECT_TRUE(
      ErrorContains(ParamsError("port_loss", {{"percent", 5}}, l.nft.host()), "params.interface"));
  EXPECT_TRUE(l.nft.calls.empty());
}

}  // namespace
}  // namespace fdrill

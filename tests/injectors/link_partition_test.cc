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
  auto f = MakeFault("link_partition", params, rig.host());
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(*f);
}

Argv Ipt(Argv args) {
  Argv argv = {"iptables", "-w", "5", "-t", "filter"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

TEST(LinkPartition, DropsBothWaysPerPeerThenRevertsExactly) {
  Rig rig;
  auto f = Make(rig, {{"peers", {"198.18.0.2", "198.18.0.3"}}, {"interface", "fab0"}});
  EXPECT_EQ(f->Target(), "fab0");
  ASSERT_TRUE(f->Capture().ok());
  std::string c = f->Saved()["chain"];
  EXPECT_EQ(c.rfind("FDRILL-PART-", 0), 0u);
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok()) << f->Verify().ToString();
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_FALSE(f->Verify().ok());
  EXPECT_TRUE(rig.ipt.tables.empty());
  const Argv tag = {"-m", "comment", "--comment", "fdrill:link_partition", "-j", c};
  auto with_tag = [&](Argv a) {
    a.insert(a.end(), tag.begin(), tag.end());
    return a;
  };
  std::vector<Argv> want = {
      Ipt({"-N", c}),
      Ipt({"-A", c, "-s", "198.18.0.2", "-j", "DROP"}),
      Ipt({"-A", c, "-d", "198.18.0.2", "-j", "DROP"}),
      Ipt({"-A", c, "-s", "198.18.0.3", "-j", "DROP"}),
      Ipt({"-A", c, "-d", "198.18.0.3", "-j", "DROP"}),
      Ipt(with_tag({"-I", "INPUT", "1", "-i", "fab0"})),
      Ipt(with_tag({"-I", "OUTPUT", "1", "-o", "fab0"})),
      Ipt(with_tag({"-D", "INPUT", "-i", "fab0"})),
      Ipt(with_tag({"-D", "OUTPUT", "-o", "fab0"})),
      Ipt({"-F", c}),
      Ipt({"-X", c}),
      {"nft", "delete", "table", "ip", "filter"},
  };
  EXPECT_EQ(rig.ipt.Mutations(), want);
}

TEST(LinkPartition, WithoutAnInterfaceItHooksEveryInterfaceAndTargetsThePeers) {
  Rig rig;
  auto f = Make(rig, {{"peers", "198.18.0.2, 198.18.0.4"}});
  EXPECT_EQ(f->Target(), "peers:198.18.0.2,198.18.0.4");
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  std::string c = f->Saved()["chain"];
  EXPECT_EQ(rig.ipt.tables.at("filter").chains.at("INPUT").rules,
            (std::vector<Argv>{{"-m", "comment", "--comment", "fdrill:link_partition", "-j", c}}));
  ASSERT_TRUE(f->Verify().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
}

TEST(LinkPartition, RevertAfterFailedApplyRemovesTheHalfHookedChain) {
  Rig rig;
  ASSERT_EQ(rig.ipt.Run(Ipt({"-A", "INPUT", "-p", "icmp", "-j", "ACCEPT"}), {})->exit_code, 0);
  auto before = rig.ipt.Dump();
  auto f = Make(rig, {{"peers", {"198.18.0.2"}}});
  ASSERT_TRUE(f->Capture().ok());
  rig.ipt.FailNext(Ipt({"-I", "OUTPUT"}), "iptables: Resource temporarily unavailable.\n");
  ASSERT_FALSE(f->Apply().ok());  // INPUT hooked, OUTPUT not
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(rig.ipt.Dump(), before);
}

TEST(LinkPartition, RevertTwiceAndRevertWithoutApplyTouchNothingMore) {
  Rig rig;
  auto f = Make(rig, {{"peers", {"198.18.0.2"}}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_TRUE(rig.ipt.Mutations().empty());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  size_t n = rig.ipt.Mutations().size();
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(rig.ipt.Mutations().size(), n);
}

TEST(LinkPartition, ParamsValidateAndNameTheKey) {
  Rig rig;
  auto expect_key = [&](const Json& params, const std::string& key, const std::string& words = "") {
    auto f = MakeFault("link_partition", params, rig.host());
    ASSERT_FALSE(f.ok()) << params.dump();
    EXPECT_EQ(f.status().message().rfind("params." + key + ":", 0), 0u) << f.status().message();
    EXPECT_NE(f.status().message().find(words), std::string::npos) << f.status().message();
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
  Rig rig;
  Json params = {{"peers", {"198.18.0.2"}}, {"interface", "fab0"}};
  auto first = Make(rig, params);
  ASSERT_TRUE(first->Capture().ok());
  Json record = {{"kind", "link_partition"}, {"params", params}, {"saved", first->Saved()}};
  ASSERT_TRUE(first->Apply().ok());
  first.reset();
  auto again = RestoreFault(record, rig.host());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE((*again)->Revert().ok());
  ASSERT_TRUE((*again)->VerifyReverted().ok());
  EXPECT_TRUE(rig.ipt.tables.empty());
}

}  // namespace
}  // namespace fdrill

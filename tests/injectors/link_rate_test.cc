#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_net.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

TEST(LinkRate, ApplyVerifyRevertVerifyWithExactArgv) {
  FakeNetKernel k;
  auto f = MakeOk("link_rate", {{"interface", "fab0"}, {"rate", "100mbit"}}, k.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["prior_kind"], "noqueue");
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(k.ifaces["fab0"].qdisc_kind, "tbf");
  ASSERT_TRUE(Reverted(*f));
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
  auto f = MakeOk("link_rate", {{"interface", "fab0"}, {"rate", "1gbit"}}, k.host());
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, k));
  EXPECT_EQ(k.Mutations().size(), 2u);  // one replace, one del
}

TEST(LinkRate, RevertAfterFailedApplyLeavesTheFoundState) {
  FakeNetKernel k;
  auto f = MakeOk("link_rate", {{"interface", "fab0"}, {"rate", "100mbit"}}, k.host());
  ASSERT_TRUE(f->Capture().ok());
  k.FailNext({"tc", "qdisc", "replace"}, "RTNETLINK answers: Operation not permitted\n");
  ASSERT_TRUE(ErrorContains(f->Apply(), "Operation not permitted"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(k.Mutations().size(), 1u);  // only the failed replace
}

TEST(LinkRate, RefusesAQdiscItCannotRestore) {
  FakeNetKernel k;
  k.ifaces["fab0"].qdisc_kind = "htb";
  k.ifaces["fab0"].qdisc_handle = "1:";
  auto f = MakeOk("link_rate", {{"interface", "fab0"}, {"rate", "100mbit"}}, k.host());
  EXPECT_TRUE(ErrorContains(f->Capture(), "htb"));
  EXPECT_TRUE(k.Mutations().empty());
}

TEST(LinkRate, MissingInterfaceIsNotFoundNamingIt) {
  FakeNetKernel k;
  auto f = MakeOk("link_rate", {{"interface", "fab9"}, {"rate", "100mbit"}}, k.host());
  EXPECT_TRUE(ErrorContains(f->Capture(), StatusCode::kNotFound, "fab9"));
}

TEST(LinkRate, ParamsValidateAndNameTheKey) {
  FakeNetKernel k;
  EXPECT_TRUE(
      RefusedNaming("link_rate", {{"interface", "fab0"}, {"rate", "100mbps"}}, k.host(), "rate"));
  EXPECT_TRUE(ErrorContains(
      ParamsError("link_rate", {{"interface", "fab0"}, {"rate", "1gbit"}, {"brust", "64K"}},
                  k.host()),
      "did you mean \"burst\""));
  EXPECT_TRUE(
      ErrorContains(ParamsError("link_rate", {{"rate", "1gbit"}}, k.host()), "params.interface"));
  EXPECT_TRUE(k.calls.empty());
}

TEST(LinkRate, RestoredFromJournalRevertsWhatALostAgentApplied) {
  FakeNetKernel k;
  Json record =
      JournalApplyAndDie("link_rate", {{"interface", "fab0"}, {"rate", "100mbit"}}, k.host());
  ASSERT_TRUE(Reverted(*Restore(record, k.host())));
  EXPECT_EQ(k.ifaces["fab0"].qdisc_kind, "noqueue");
}

// An emulated switch port: the fabric's tbf 1: (its modelled capacity) over
// an explicit bfifo 10:, as `fdrill fabric up` builds it.
void ShapedPort(FakeNetKernel& k, const std::string& port) {
  FakeNetKernel::Iface& i = k.ifaces[port];
  i.qdisc_kind = "tbf";
  i.qdisc_handle = "1:";
  i.qdisc_options = {{"rate", 62500000}, {"burst", 655312}, {"lat", 20000}};
  i.child_parent = "1:1";
  i.child = {
      {"kind", "bfifo"}, {"handle", "10:"}, {"parent", "1:1"}, {"options", {{"limit", 1905360}}}};
}

TEST(LinkRateOnAShapedPort, NestsUnderTheTbfAndPutsItsFifoBackExactly) {
  FakeNetKernel k;
  ShapedPort(k, "up0");
  const FakeNetKernel::Iface found = k.ifaces["up0"];
  auto f = MakeOk("link_rate", {{"interface", "up0"}, {"rate", "100mbit"}}, k.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["parent"], "1:1");
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(k.ifaces["up0"].qdisc_options, found.qdisc_options) << "the port's own tbf untouched";
  EXPECT_EQ(k.ifaces["up0"].child["handle"], "fd1:");
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(k.ifaces["up0"].child, found.child);
  EXPECT_EQ(k.ifaces["up0"].qdisc_options, found.qdisc_options);
  std::vector<Argv> want = {
      {"tc", "qdisc", "replace", "dev", "up0", "parent", "1:1", "handle", "fd1:", "tbf", "rate",
       "100000000bit", "burst", "131072", "latency", "50ms"},
      {"tc", "qdisc", "replace", "dev", "up0", "parent", "1:1", "handle", "10:", "bfifo", "limit",
       "1905360"},
  };
  EXPECT_EQ(k.Mutations(), want);
  // Safe twice: the fifo is back, nothing of ours is left to revert.
  ASSERT_TRUE(f->Revert().ok());
  EXPECT_EQ(k.Mutations().size(), 2u);
}

TEST(LinkRateOnAShapedPort, VerifyRevertedComparesRootAndChildWithWhatWasFound) {
  FakeNetKernel k;
  ShapedPort(k, "up0");
  auto f = MakeOk("link_rate", {{"interface", "up0"}, {"rate", "100mbit"}}, k.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Revert().ok());
  k.ifaces["up0"].child["options"]["limit"] = 1000;
  EXPECT_TRUE(ErrorContains(f->VerifyReverted(), "expected bfifo 10: (parent 1:1)"));
}

TEST(LinkRateOnAShapedPort, ATbfWithItsBuiltInQueueIsRefusedSayingWhatWouldDo) {
  FakeNetKernel k;
  ShapedPort(k, "up0");
  k.ifaces["up0"].child = Json();
  auto f = MakeOk("link_rate", {{"interface", "up0"}, {"rate", "100mbit"}}, k.host());
  EXPECT_TRUE(ErrorContains(f->Capture(), StatusCode::kFailedPrecondition,
                            "tbf 1: with its built-in queue; fdrill nests its cap under a tbf "
                            "only when the tbf's queue is an explicit bfifo or pfifo"));
  EXPECT_TRUE(k.Mutations().empty());
}

TEST(LinkRateOnAShapedPort, RestoredFromJournalPutsTheFifoBack) {
  FakeNetKernel k;
  ShapedPort(k, "up0");
  const Json child = k.ifaces["up0"].child;
  Json record =
      JournalApplyAndDie("link_rate", {{"interface", "up0"}, {"rate", "100mbit"}}, k.host());
  ASSERT_EQ(k.ifaces["up0"].child["handle"], "fd1:");
  ASSERT_TRUE(Reverted(*Restore(record, k.host())));
  EXPECT_EQ(k.ifaces["up0"].child, child);
}

TEST(LinkRateOnAShapedPort, PerPeerHtbNestsToo) {
  FakeNetKernel k;
  ShapedPort(k, "up0");
  const Json child = k.ifaces["up0"].child;
  auto f = MakeOk("link_rate",
                  {{"interface", "up0"}, {"rate", "50mbit"}, {"peers", {"198.18.0.2"}}}, k.host());
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(k.Mutations()[0], (Argv{"tc", "qdisc", "replace", "dev", "up0", "parent", "1:1",
                                    "handle", "fd1:", "htb", "default", "0"}));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(k.ifaces["up0"].child, child);
}

TEST(LinkRatePerPeer, HtbWithOneShapedClassAndAU32FilterPerPeer) {
  FakeNetKernel k;
  auto f = MakeOk(
      "link_rate",
      {{"interface", "fab0"}, {"rate", "50mbit"}, {"peers", {"198.18.0.2", "198.18.1.0/24"}}},
      k.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(k.ifaces["fab0"].filters[1]["options"]["match"]["value"], "c6120100");
  EXPECT_EQ(k.ifaces["fab0"].filters[1]["options"]["match"]["mask"], "ffffff00");
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(Reverted(*f));
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
  auto f = MakeOk("link_rate",
                  {{"interface", "fab0"}, {"rate", "50mbit"}, {"peers", "198.18.0.2, 198.18.0.3"}},
                  k.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Verify().ok());
  Json all = k.ifaces["fab0"].filters;
  k.ifaces["fab0"].filters.erase(1);
  EXPECT_TRUE(ErrorContains(f->Verify(), StatusCode::kFailedPrecondition, "198.18.0.3"));
  k.ifaces["fab0"].filters = all;
  k.ifaces["fab0"].classes = {
      "class htb fd1:1 root prio 0 rate 10Mbit ceil 10Mbit burst 1600b cburst 1600b "};
  EXPECT_TRUE(ErrorContains(f->Verify(), "10000000 bit/s"));
  k.ifaces["fab0"].classes.clear();
  EXPECT_NE(f->Verify().message().find("missing"), std::string::npos);
}

TEST(LinkRatePerPeer, RevertAfterAFailedFilterRemovesTheWholeQdisc) {
  FakeNetKernel k;
  auto f = MakeOk("link_rate",
                  {{"interface", "fab0"}, {"rate", "50mbit"}, {"peers", {"198.18.0.2"}}}, k.host());
  ASSERT_TRUE(f->Capture().ok());
  k.FailNext({"tc", "filter", "add"}, "Error: TC classifier not found.\n");
  ASSERT_TRUE(ErrorContains(f->Apply(), "classifier not found"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(k.ifaces["fab0"].qdisc_kind, "noqueue");
}

TEST(LinkRatePerPeer, ParamsNameTheKey) {
  FakeNetKernel k;
  for (const auto& [params, key] : std::vector<std::pair<Json, std::string>>{
           {{{"interface", "fab0"}, {"rate", "1gbit"}, {"peers", Json::array()}}, "peers"},
           {{{"interface", "fab0"}, {"rate", "1gbit"}, {"peers", {"n2"}}}, "peers"},
           {{{"interface", "fab0"},
             {"rate", "1gbit"},
             {"peers", {"198.18.0.2"}},
             {"latency", "10ms"}},
            "latency"}}) {
    EXPECT_TRUE(RefusedNaming("link_rate", params, k.host(), key));
  }
  EXPECT_TRUE(k.calls.empty());
}

TEST(LinkRatePerPeer, RestoredFromJournalRevertsTheHtbTree) {
  FakeNetKernel k;
  Json record = JournalApplyAndDie(
      "link_rate", {{"interface", "fab0"}, {"rate", "50mbit"}, {"peers", {"198.18.0.2"}}},
      k.host());
  ASSERT_TRUE(Reverted(*Restore(record, k.host())));
  EXPECT_EQ(k.ifaces["fab0"].qdisc_kind, "noqueue");
}

}  // namespace
}  // namespace fdrill

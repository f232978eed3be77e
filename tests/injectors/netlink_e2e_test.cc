// NetlinkNetStack against the real kernel, read back by tc and ip: in a
// namespace pair of its own (fdn-<pid>a/b, tests/support/netns_pair.h), each
// change made over rtnetlink is read back through iproute2 (IprouteNetStack
// on a NamespaceRunner) and the other way round, and the network injectors
// run their whole cycle over netlink (link_flap and link_down also keep an
// operator's permanent neighbour, which the kernel flushes on the down). Needs root; the namespaces
// are deleted in TearDown whatever happened.
#include <unistd.h>

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "common/host/iproute_net_stack.h"
#include "common/host/netlink_net_stack.h"
#include "injectors/injector.h"
#include "injectors/netdev.h"
#include "tests/support/netns_pair.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;

const Qdisc* Root(const std::vector<Qdisc>& tree) {
  for (const auto& q : tree)
    if (q.parent.empty()) return &q;
  return nullptr;
}

class NetlinkE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    Status made = pair_.Create("fdn");
    ASSERT_TRUE(made.ok()) << made.ToString();
    runner_ = std::make_unique<NamespaceRunner>(pair_.a());
    sysfs_ = std::make_unique<NamespaceSysFs>(runner_.get());
    tools_ = std::make_unique<IprouteNetStack>(runner_.get());
    // The socket opens in the namespace of the thread that first uses it.
    auto links = InNamespace(pair_.a(), [&] { return net_.Links(); });
    ASSERT_TRUE(links.ok()) << links.status().ToString();
  }
  void TearDown() override { pair_.Delete(); }

  Host host() {
    Host h{runner_.get(), sysfs_.get()};
    h.net = &net_;
    return h;
  }

  NetnsPair pair_;
  std::unique_ptr<NamespaceRunner> runner_;
  std::unique_ptr<NamespaceSysFs> sysfs_;
  std::unique_ptr<IprouteNetStack> tools_;
  NetlinkNetStack net_;
};

TEST_F(NetlinkE2e, LinksReadAsIpReadsThem) {
  auto ours = net_.Links();
  auto theirs = tools_->Links();
  ASSERT_TRUE(ours.ok() && theirs.ok());
  ASSERT_EQ(ours->size(), theirs->size());
  for (size_t i = 0; i < ours->size(); ++i) {
    EXPECT_EQ((*ours)[i].name, (*theirs)[i].name);
    EXPECT_EQ((*ours)[i].admin_up, (*theirs)[i].admin_up) << (*ours)[i].name;
    EXPECT_EQ((*ours)[i].operstate, (*theirs)[i].operstate) << (*ours)[i].name;
    EXPECT_EQ((*ours)[i].master, (*theirs)[i].master) << (*ours)[i].name;
  }
}

TEST_F(NetlinkE2e, LinkDownAndUpAsIpSeesThem) {
  ASSERT_TRUE(net_.Apply(NetChange::LinkUp("fab0", false)).ok());
  auto down = ReadLink(*tools_, "fab0");
  ASSERT_TRUE(down.ok());
  EXPECT_FALSE(down->admin_up);
  ASSERT_TRUE(net_.Apply(NetChange::LinkUp("fab0", true)).ok());
  EXPECT_TRUE(ReadLink(*tools_, "fab0")->admin_up);
}

TEST_F(NetlinkE2e, TbfMadeOverNetlinkReadsAsTcReadsIt) {
  auto before = tools_->Qdiscs("fab0");
  ASSERT_TRUE(before.ok());
  const std::string prior = Root(*before)->kind;
  ASSERT_TRUE(
      net_.Apply(NetChange::Tbf("fab0", "", "fd1:", 100'000'000, 131072, milliseconds(50))).ok());
  auto tc = tools_->Qdiscs("fab0");
  auto nl = net_.Qdiscs("fab0");
  ASSERT_TRUE(tc.ok() && nl.ok());
  ASSERT_NE(Root(*tc), nullptr);
  EXPECT_EQ(Root(*tc)->kind, "tbf");
  EXPECT_EQ(Root(*tc)->handle, "fd1:");
  EXPECT_EQ(Root(*tc)->options.value("rate", 0), 12'500'000);
  EXPECT_EQ(Root(*nl)->kind, "tbf");
  EXPECT_EQ(Root(*nl)->handle, "fd1:");
  EXPECT_EQ(Root(*nl)->options.value("rate", 0), 12'500'000);
  // Both derive the burst from the kernel's time-based bucket.
  const double tc_burst = Root(*tc)->options.value("burst", 0.0);
  const double nl_burst = Root(*nl)->options.value("burst", 0.0);
  EXPECT_NEAR(nl_burst, 131072, 131072 * 0.01);
  EXPECT_NEAR(tc_burst, nl_burst, nl_burst * 0.01);

  ASSERT_TRUE(net_.Apply(NetChange::DeleteRootQdisc("fab0")).ok());
  EXPECT_EQ(Root(*tools_->Qdiscs("fab0"))->kind, prior);
}

TEST_F(NetlinkE2e, AboveThirtyTwoBitsTheRateGoesAs64Bits) {
  const uint64_t bits = 400'000'000'000;  // 50 GB/s: past tc_ratespec's u32
  ASSERT_TRUE(net_.Apply(NetChange::Tbf("fab0", "", "fd1:", bits, 4 << 20, milliseconds(10))).ok());
  EXPECT_EQ(Root(*net_.Qdiscs("fab0"))->options.value("rate", uint64_t{0}), bits / 8);
  EXPECT_EQ(Root(*tools_->Qdiscs("fab0"))->options.value("rate", uint64_t{0}), bits / 8);
}

TEST_F(NetlinkE2e, AFifoUnderATbfIsReplacedAndPutBack) {
  ASSERT_TRUE(
      tools_->Apply(NetChange::Tbf("fab0", "", "1:", 500'000'000, 655360, milliseconds(50))).ok());
  ASSERT_TRUE(tools_->Apply(NetChange::Fifo("fab0", "1:1", "10:", "bfifo", 100000)).ok());
  ASSERT_TRUE(
      net_.Apply(NetChange::Tbf("fab0", "1:1", "fd1:", 100'000'000, 131072, milliseconds(50)))
          .ok());
  auto tc = tools_->Qdiscs("fab0");
  ASSERT_TRUE(tc.ok());
  ASSERT_EQ(tc->size(), 2u);
  EXPECT_EQ((*tc)[1].handle, "fd1:");
  EXPECT_EQ((*tc)[1].parent, "1:1");
  ASSERT_TRUE(net_.Apply(NetChange::Fifo("fab0", "1:1", "10:", "bfifo", 100000)).ok());
  auto nl = net_.Qdiscs("fab0");
  ASSERT_TRUE(nl.ok());
  ASSERT_EQ(nl->size(), 2u);
  EXPECT_EQ((*nl)[1].kind, "bfifo");
  EXPECT_EQ((*nl)[1].handle, "10:");
  EXPECT_EQ((*nl)[1].options.value("limit", 0), 100000);
  EXPECT_EQ((*tools_->Qdiscs("fab0"))[1].options.value("limit", 0), 100000);
}

TEST_F(NetlinkE2e, HtbClassAndU32FilterReadAsTcReadsThem) {
  ASSERT_TRUE(ApplyEach(net_,
                        {NetChange::HtbRoot("fab0", "", "fd1:"),
                         NetChange::HtbClassRate("fab0", "fd1:", "fd1:1", 100'000'000, 131072),
                         NetChange::U32Dst("fab0", "fd1:", "198.18.200.2", "fd1:1"),
                         NetChange::U32Dst("fab0", "fd1:", "198.18.0.0/16", "fd1:1")},
                        "test")
                  .ok());
  auto tc_classes = tools_->HtbClasses("fab0");
  auto nl_classes = net_.HtbClasses("fab0");
  ASSERT_TRUE(tc_classes.ok() && nl_classes.ok());
  ASSERT_EQ(tc_classes->size(), 1u);
  ASSERT_EQ(nl_classes->size(), 1u);
  EXPECT_EQ((*tc_classes)[0].classid, "fd1:1");
  EXPECT_EQ((*nl_classes)[0].classid, "fd1:1");
  EXPECT_EQ((*tc_classes)[0].rate_bits, 100'000'000u);
  EXPECT_EQ((*nl_classes)[0].rate_bits, 100'000'000u);
  auto tc_filters = tools_->U32Filters("fab0");
  auto nl_filters = net_.U32Filters("fab0");
  ASSERT_TRUE(tc_filters.ok() && nl_filters.ok());
  ASSERT_EQ(nl_filters->size(), 2u);
  ASSERT_EQ(tc_filters->size(), nl_filters->size());
  for (size_t i = 0; i < nl_filters->size(); ++i) {
    EXPECT_EQ((*nl_filters)[i].value, (*tc_filters)[i].value);
    EXPECT_EQ((*nl_filters)[i].mask, (*tc_filters)[i].mask);
    EXPECT_EQ((*nl_filters)[i].off, 16);
    EXPECT_EQ((*nl_filters)[i].flowid, "fd1:1");
  }
  EXPECT_EQ((*nl_filters)[0].value, "c612c802");
  EXPECT_EQ((*nl_filters)[1].mask, "ffff0000");
}

TEST_F(NetlinkE2e, RootCountersNameEveryInterfaceAsTcDoes) {
  auto nl = net_.RootCounters();
  auto tc = tools_->RootCounters();
  ASSERT_TRUE(nl.ok() && tc.ok());
  std::set<std::string> ours, theirs;
  for (const auto& c : *nl) ours.insert(c.dev);
  for (const auto& c : *tc) theirs.insert(c.dev);
  EXPECT_EQ(ours, theirs);
  EXPECT_TRUE(ours.count("fab0"));
}

TEST_F(NetlinkE2e, RoutesAndAddressesReadAsIpReadsThem) {
  auto nl_dev = net_.RouteDevice(NetnsPair::kAddressB);
  auto tc_dev = tools_->RouteDevice(NetnsPair::kAddressB);
  ASSERT_TRUE(nl_dev.ok()) << nl_dev.status().ToString();
  ASSERT_TRUE(tc_dev.ok());
  EXPECT_EQ(*nl_dev, "fab0");
  EXPECT_EQ(*nl_dev, *tc_dev);
  EXPECT_EQ(*net_.RouteDevice("127.0.0.1"), "lo");
  auto held = net_.AddressDevices(NetnsPair::kAddressA);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(*held, std::vector<std::string>{"fab0"});
  EXPECT_EQ(*held, *tools_->AddressDevices(NetnsPair::kAddressA));
  EXPECT_TRUE(net_.AddressDevices(NetnsPair::kAddressB)->empty());  // the peer's, not ours
  EXPECT_EQ(net_.AddressDevices("not-an-address").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(NetlinkE2e, TheKernelsRefusalNamesTheCommand) {
  Status missing = net_.Apply(NetChange::LinkUp("nosuch0", false));
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("nosuch0"), std::string::npos) << missing.message();
  EXPECT_EQ(net_.Qdiscs("nosuch0").status().code(), StatusCode::kNotFound);
  // The kernel default (noqueue, handle 0) cannot be deleted.
  Status del = net_.Apply(NetChange::DeleteRootQdisc("fab0"));
  EXPECT_FALSE(del.ok());
  EXPECT_NE(del.message().find("tc qdisc del dev fab0 root"), std::string::npos) << del.message();
}

// The injectors' whole cycle over netlink, checked by tc.
TEST_F(NetlinkE2e, LinkRateRunsItsCycleOverNetlink) {
  for (const Json& params :
       {Json{{"interface", "fab0"}, {"rate", "100mbit"}},
        Json{{"interface", "fab0"}, {"rate", "100mbit"}, {"peers", {"198.18.200.2"}}}}) {
    SCOPED_TRACE(params.dump());
    auto f = MakeFault("link_rate", params, host());
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    Fault& fault = **f;
    ASSERT_TRUE(fault.Capture().ok());
    ASSERT_TRUE(fault.Apply().ok());
    Status verified = fault.Verify();
    EXPECT_TRUE(verified.ok()) << verified.ToString();
    EXPECT_EQ(Root(*tools_->Qdiscs("fab0"))->handle, "fd1:");
    ASSERT_TRUE(fault.Revert().ok());
    Status reverted = fault.VerifyReverted();
    EXPECT_TRUE(reverted.ok()) << reverted.ToString();
    EXPECT_NE(Root(*tools_->Qdiscs("fab0"))->handle, "fd1:");
  }
}

TEST_F(NetlinkE2e, LinkFlapTakesTheLinkDownAndBringsItBack) {
  auto f = MakeFault("link_down", {{"interface", "fab0"}}, host());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE((*f)->Capture().ok());
  ASSERT_TRUE((*f)->Apply().ok());
  EXPECT_TRUE((*f)->Verify().ok());
  EXPECT_FALSE(ReadLink(*tools_, "fab0")->admin_up);
  ASSERT_TRUE((*f)->Revert().ok());
  EXPECT_TRUE((*f)->VerifyReverted().ok());
  EXPECT_TRUE(ReadLink(*tools_, "fab0")->admin_up);
}

TEST_F(NetlinkE2e, NeighboursReadAsIpReadsThem) {
  ASSERT_TRUE(
      ApplyEach(net_,
                {NetChange::NeighReplace("fab0", "198.18.200.9", "02:fd:00:00:00:09", true),
                 NetChange::NeighReplace("fab0", "198.18.200.8", "02:fd:00:00:00:08", false),
                 NetChange::NeighReplace("fab0", "fe80::8", "02:fd:00:00:00:08", false)},
                "test")
          .ok());
  auto nl = net_.Neighbours("fab0");
  auto ip = tools_->Neighbours("fab0");
  ASSERT_TRUE(nl.ok()) << nl.status().ToString();
  ASSERT_TRUE(ip.ok()) << ip.status().ToString();
  auto sorted = [](std::vector<Neighbour> v) {
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.dst < b.dst; });
    return v;
  };
  std::vector<Neighbour> want = {{"198.18.200.8", "02:fd:00:00:00:08", "STALE"},
                                 {"198.18.200.9", "02:fd:00:00:00:09", "PERMANENT"},
                                 {"fe80::8", "02:fd:00:00:00:08", "STALE"}};
  EXPECT_EQ(sorted(*nl), want);
  EXPECT_EQ(sorted(*ip), want);
  EXPECT_EQ(net_.Neighbours("nosuch0").status().code(), StatusCode::kNotFound);
}

// The kernel flushes fab0's neighbours on the down, PERMANENT ones too; the
// up edge of a flap and the revert of a link_down put them back.
TEST_F(NetlinkE2e, APermanentNeighbourSurvivesALinkFlapAndALinkDownRevert) {
  const Neighbour operators{"198.18.200.9", "02:fd:00:00:00:09", "PERMANENT"};
  auto has = [&](const Neighbour& n) {
    auto now = tools_->Neighbours("fab0");
    return now.ok() && std::find(now->begin(), now->end(), n) != now->end();
  };
  ASSERT_TRUE(
      tools_->Apply(NetChange::NeighReplace("fab0", operators.dst, operators.lladdr, true)).ok());
  ASSERT_TRUE(has(operators));

  auto flap = MakeFault("link_flap", {{"interface", "fab0"}, {"down", "50ms"}}, host());
  ASSERT_TRUE(flap.ok()) << flap.status().ToString();
  ASSERT_TRUE((*flap)->Capture().ok());
  ASSERT_TRUE((*flap)->Apply().ok());
  EXPECT_TRUE(tools_->Neighbours("fab0")->empty());  // neigh_ifdown
  Status up = (*flap)->Tick(milliseconds(50));
  ASSERT_TRUE(up.ok()) << up.ToString();
  EXPECT_TRUE(ReadLink(*tools_, "fab0")->admin_up);
  EXPECT_TRUE(has(operators));
  ASSERT_TRUE((*flap)->Revert().ok());
  Status flap_reverted = (*flap)->VerifyReverted();
  EXPECT_TRUE(flap_reverted.ok()) << flap_reverted.ToString();

  auto down = MakeFault("link_down", {{"interface", "fab0"}}, host());
  ASSERT_TRUE(down.ok()) << down.status().ToString();
  ASSERT_TRUE((*down)->Capture().ok());
  ASSERT_TRUE((*down)->Apply().ok());
  EXPECT_FALSE(has(operators));
  ASSERT_TRUE((*down)->Revert().ok());
  Status down_reverted = (*down)->VerifyReverted();
  EXPECT_TRUE(down_reverted.ok()) << down_reverted.ToString();
  EXPECT_TRUE(has(operators));
}

}  // namespace
}  // namespace fdrill

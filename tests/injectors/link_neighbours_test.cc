// LinkNeighbours (injectors/link_neighbours.h) on the recording fake: its
// journal form, and which re-adds it makes and which failures it reports.
#include "injectors/link_neighbours.h"

#include <gtest/gtest.h>

#include "common/host/iproute_net_stack.h"
#include "tests/fakes/fake_net.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

Json KeptEntry(const std::string& dst, const std::string& lladdr, const std::string& state) {
  Json e = {{"dst", dst}, {"state", Json::array({state})}};
  if (!lladdr.empty()) e["lladdr"] = lladdr;
  return e;
}

TEST(LinkNeighbours, SavedLoadsBackAndSkipsWhatItCannotRead) {
  FakeNetKernel k;
  k.ifaces["fab0"].neighbours =
      Json::array({KeptEntry("198.18.0.2", "02:fd:00:00:01:02", "STALE"),
                   KeptEntry("198.18.0.3", "02:fd:00:00:01:03", "PERMANENT")});
  IprouteNetStack net(&k);
  LinkNeighbours taken;
  ASSERT_TRUE(taken.Capture(net, "fab0").ok());
  LinkNeighbours loaded;
  loaded.Load(taken.Saved());
  EXPECT_EQ(loaded.entries(), taken.entries());
  EXPECT_EQ(loaded.entries().size(), 2u);
  LinkNeighbours old;  // a journal from before neighbours were kept
  old.Load(Json());
  EXPECT_TRUE(old.entries().empty());
  Json odd = taken.Saved();
  odd.push_back({{"dst", "198.18.0.9"}});  // no lladdr
  odd.push_back(7);
  loaded.Load(odd);
  EXPECT_EQ(loaded.entries(), taken.entries());
}

TEST(LinkNeighbours, ReAddTriesEveryEntryAndFailsOnlyForAPermanentOne) {
  FakeNetKernel k;
  k.ifaces["fab0"].neighbours =
      Json::array({KeptEntry("198.18.0.2", "02:fd:00:00:01:02", "REACHABLE"),
                   KeptEntry("198.18.0.3", "02:fd:00:00:01:03", "PERMANENT")});
  IprouteNetStack net(&k);
  LinkNeighbours n;
  ASSERT_TRUE(n.Capture(net, "fab0").ok());
  k.ifaces["fab0"].neighbours = Json::array();
  k.FailNext({"ip", "neigh", "replace", "198.18.0.2"}, "RTNETLINK answers: No buffer space\n");
  EXPECT_TRUE(n.ReAdd(net, "fab0").ok());  // the dynamic one is the kernel's to resolve
  EXPECT_EQ(k.ifaces["fab0"].neighbours.size(), 1u);
  k.ifaces["fab0"].neighbours = Json::array();
  k.FailNext({"ip", "neigh", "replace", "198.18.0.3"}, "RTNETLINK answers: No buffer space\n");
  Status s = n.ReAdd(net, "fab0");
  EXPECT_TRUE(ErrorContains(s, "198.18.0.3")) << s.ToString();
  EXPECT_TRUE(ErrorContains(s, "No buffer space")) << s.ToString();
  EXPECT_EQ(k.ifaces["fab0"].neighbours.size(), 1u);  // the dynamic one was still re-added
  EXPECT_TRUE(ErrorContains(n.ExpectPermanent(net, "fab0"), "198.18.0.3"));
  // Only the missing permanent entry; then, all there, nothing.
  const size_t before = k.Mutations().size();
  ASSERT_TRUE(n.ReAddMissingPermanent(net, "fab0").ok());
  ASSERT_EQ(k.Mutations().size(), before + 1);
  EXPECT_EQ(k.Mutations().back(), (Argv{"ip", "neigh", "replace", "198.18.0.3", "lladdr",
                                        "02:fd:00:00:01:03", "dev", "fab0", "nud", "permanent"}));
  ASSERT_TRUE(n.ReAddMissingPermanent(net, "fab0").ok());
  EXPECT_EQ(k.Mutations().size(), before + 1);
  EXPECT_TRUE(n.ExpectPermanent(net, "fab0").ok());
}

}  // namespace
}  // namespace fdrill

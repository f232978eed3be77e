// switch_down against FakeNetKernel: a leaf's bridge br0 with three ports
// (swp0, swp1, up0) and its management interface on no bridge.
#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_net.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

FakeNetKernel Leaf() {
  FakeNetKernel k;
  k.ifaces.erase("fab0");
  k.ifaces["br0"] = FakeNetKernel::Iface{};
  for (const char* port : {"swp0", "swp1", "up0"}) {
    k.ifaces[port] = FakeNetKernel::Iface{};
    k.ifaces[port].master = "br0";
  }
  return k;
}

TEST(SwitchDown, TakesEveryPortOfTheBridgeDownAndBringsThemBack) {
  FakeNetKernel k = Leaf();
  auto f = MakeOk("switch_down", Json::object(), k.host());
  EXPECT_EQ(f->Target(), "br0");
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["ports"], Json({"swp0", "swp1", "up0"}));
  ASSERT_TRUE(AppliedAndVerified(*f));
  for (const char* port : {"swp0", "swp1", "up0"}) EXPECT_FALSE(k.ifaces[port].up) << port;
  EXPECT_TRUE(k.ifaces["br0"].up);
  EXPECT_TRUE(k.ifaces["mgmt0"].up);
  ASSERT_TRUE(Reverted(*f));
  for (const char* port : {"swp0", "swp1", "up0"}) EXPECT_TRUE(k.ifaces[port].up) << port;
  std::vector<Argv> want = {
      {"ip", "link", "set", "dev", "swp0", "down"}, {"ip", "link", "set", "dev", "swp1", "down"},
      {"ip", "link", "set", "dev", "up0", "down"},  {"ip", "link", "set", "dev", "swp0", "up"},
      {"ip", "link", "set", "dev", "swp1", "up"},   {"ip", "link", "set", "dev", "up0", "up"},
  };
  EXPECT_EQ(k.Mutations(), want);
}

TEST(SwitchDown, RevertAfterAPartialApplyBringsUpOnlyWhatWentDown) {
  FakeNetKernel k = Leaf();
  auto f = MakeOk("switch_down", Json::object(), k.host());
  ASSERT_TRUE(f->Capture().ok());
  k.FailNext({"ip", "link", "set", "dev", "swp1"}, "RTNETLINK answers: Operation not permitted\n");
  ASSERT_TRUE(ErrorContains(f->Apply(), "Operation not permitted"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(k.Mutations().back(), (Argv{"ip", "link", "set", "dev", "swp0", "up"}));
  ASSERT_TRUE(f->Revert().ok());  // twice: nothing left to do
  EXPECT_EQ(k.Mutations().size(), 3u);
}

TEST(SwitchDown, RefusesAPortAlreadyDownAndABridgeWithNone) {
  FakeNetKernel k = Leaf();
  k.ifaces["swp1"].up = false;
  auto f = MakeOk("switch_down", Json::object(), k.host());
  EXPECT_TRUE(ErrorContains(f->Capture(), StatusCode::kFailedPrecondition,
                            "port swp1 is already administratively down"));
  FakeNetKernel empty;
  empty.ifaces["br0"] = FakeNetKernel::Iface{};
  auto g = MakeOk("switch_down", Json::object(), empty.host());
  EXPECT_TRUE(ErrorContains(g->Capture(), "the bridge has no ports"));
  auto h = MakeOk("switch_down", {{"bridge", "br9"}}, empty.host());
  EXPECT_TRUE(ErrorContains(h->Capture(), StatusCode::kNotFound, "br9"));
  EXPECT_TRUE(k.Mutations().empty());
  EXPECT_TRUE(empty.Mutations().empty());
}

TEST(SwitchDown, RestoredFromJournalBringsThePortsBack) {
  FakeNetKernel k = Leaf();
  Json record = JournalApplyAndDie("switch_down", Json::object(), k.host());
  ASSERT_FALSE(k.ifaces["up0"].up);
  ASSERT_TRUE(Reverted(*Restore(record, k.host())));
  for (const char* port : {"swp0", "swp1", "up0"}) EXPECT_TRUE(k.ifaces[port].up) << port;
}

TEST(SwitchDown, ParamsNameTheKey) {
  FakeNetKernel k = Leaf();
  EXPECT_TRUE(ErrorContains(ParamsError("switch_down", {{"bridg", "br0"}}, k.host()),
                            "did you mean \"bridge\""));
  EXPECT_TRUE(k.calls.empty());
}

}  // namespace
}  // namespace fdrill

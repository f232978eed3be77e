// Named fabrics (FDRILL_FABRIC): what a name may be, the names a named
// fabric's objects get (none a default fabric's teardown would take), and
// the management /24 it is given when it comes up.
#include <stdlib.h>

#include <gtest/gtest.h>

#include "fabric/fabric_state.h"
#include "fabric/fabric_up.h"
#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

TEST(FabricNameTest, ANameIsOneToFourLowercaseLettersOrDigits) {
  for (const char* good : {"t", "e0", "ab12", "9"}) EXPECT_TRUE(CheckFabricName(good).ok()) << good;
  for (const char* bad : {"", "abcde", "T1", "a-b", "a.b", "a/b", "../x", "x y"}) {
    const Status s = CheckFabricName(bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.message(), std::string("FDRILL_FABRIC=") + bad +
                               ": a fabric's name is 1 to 4 of a-z and 0-9 (e.g. "
                               "FDRILL_FABRIC=t1); unset it for the default fabric");
  }
}

TEST(FabricNameTest, ANamedFabricsObjectsCarryPrefixesTheDefaultFabricsNeverMatches) {
  const FabricLayout def = FabricLayout::Default();
  const FabricLayout named = FabricLayout::Named("ab12");
  EXPECT_EQ(named.state_dir, "/run/fdrill/fabric-ab12");
  EXPECT_EQ(named.netns_prefix, "fdrill.ab12-");
  EXPECT_EQ(named.root_prefix, "fdab12.");
  EXPECT_EQ(named.MgmtBridge(), "fdab12.br");
  EXPECT_TRUE(named.mgmt_net.empty()) << "chosen at `up`, not before";
  EXPECT_EQ(named.fabric_net, def.fabric_net) << "a fabric's rails read the same on every fabric";
  // The default fabric's teardown takes what starts with its prefixes.
  EXPECT_NE(named.netns_prefix.rfind(def.netns_prefix, 0), 0u);
  EXPECT_NE(named.root_prefix.rfind(def.root_prefix, 0), 0u);
  // The longest name and node still fit a Linux interface name (15 bytes).
  EXPECT_LE((named.root_prefix + "n199").size(), 15u);
  EXPECT_EQ(FabricLayout::Named("").state_dir, def.state_dir);
}

TEST(FabricNameTest, TheEnvironmentNamesTheFabricEveryCommandMeans) {
  unsetenv(kFabricNameEnv);
  EXPECT_EQ(DefaultFabricDir(), "/run/fdrill/fabric");
  setenv(kFabricNameEnv, "t1", 1);
  EXPECT_EQ(CurrentFabricName(), "t1");
  EXPECT_EQ(DefaultFabricDir(), "/run/fdrill/fabric-t1");
  EXPECT_EQ(FabricLayout::Current().netns_prefix, "fdrill.t1-");
  unsetenv(kFabricNameEnv);
}

TEST(FabricNameTest, UpTakesTheFirstManagementNetworkNoInterfaceHoldsAnAddressIn) {
  FakeProcessRunner runner;
  runner.OnOutput({"ip", "-4", "-o", "addr", "show"},
                  "1: lo    inet 127.0.0.1/8 scope host lo\n"
                  "28: fdm-br    inet 198.19.0.254/24 scope global fdm-br\n"
                  "32: fdt1.br    inet 198.19.1.254/24 scope global fdt1.br\n"
                  "40: eth0    inet 198.19.3.7/24 scope global eth0\n");
  auto net = FreeMgmtNet(runner);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  EXPECT_EQ(*net, "198.19.2");

  FabricLayout layout = FabricLayout::Named("t2");
  layout.mgmt_net = *net;
  auto state = PlanFabric(layout, 2, "/bin/agent");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->controller_addr, "198.19.2.254/24");
  EXPECT_EQ(state->nodes[1].mgmt_addr, "198.19.2.2/24");
  EXPECT_EQ(state->nodes[1].netns, "fdrill.t2-n1");
  EXPECT_EQ(state->nodes[1].mgmt_peer, "fdt2.n1");
  EXPECT_EQ(state->nodes[1].fabric[0].addr, "198.18.0.2/24");
}

TEST(FabricNameTest, AFabricWithNoManagementNetworkChosenIsNotPlanned) {
  auto state = PlanFabric(FabricLayout::Named("t2"), 2, "/bin/agent");
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.status().message().find("no management network chosen"), std::string::npos);
}

TEST(FabricNameTest, EveryManagementNetworkTakenIsSaidSo) {
  std::string addrs;
  for (int k = kFirstNamedMgmtNet; k <= kLastNamedMgmtNet; ++k)
    addrs += "9: x" + std::to_string(k) + "    inet 198.19." + std::to_string(k) + ".254/24\n";
  FakeProcessRunner runner;
  runner.OnOutput({"ip", "-4", "-o", "addr", "show"}, addrs);
  auto net = FreeMgmtNet(runner);
  ASSERT_FALSE(net.ok());
  EXPECT_NE(net.status().message().find("is in use on this machine"), std::string::npos)
      << net.status().ToString();
}

}  // namespace
}  // namespace fdrill

// No fault may cut the agent off from its controller (agents/mgmt_guard.h):
// by name, by the route to the controller, by the listen address, by an
// IPoIB port, by an address in the params.
#include "agents/mgmt_guard.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_host.h"
#include "tests/fakes/fake_net.h"

namespace fdrill {
namespace {

TEST(MgmtGuard, TheInterfaceRoutingToTheControllerIsRefused) {
  FakeNetKernel kernel;
  kernel.ifaces["ib0"] = {};
  kernel.routes["10.9.0.1"] = "fab0";  // the controller is reached over fab0 here
  FakeClock clock;
  MgmtGuard guard("mgmt0", "0.0.0.0", clock);
  Status s = guard.Admit("link_rate", {{"interface", "fab0"}}, "fab0", "10.9.0.1", kernel.host());
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("fab0 carries this agent's management path (route to 10.9.0.1"),
            std::string::npos)
      << s.message();
  // By name, whatever the route.
  EXPECT_FALSE(guard.Admit("link_down", {}, "mgmt0", "10.9.0.1", kernel.host()).ok());
  EXPECT_FALSE(guard.Admit("link_down", {}, "lo", "", kernel.host()).ok());
  EXPECT_TRUE(
      guard.Admit("link_rate", {{"interface", "ib0"}}, "ib0", "10.9.0.1", kernel.host()).ok());
}

TEST(MgmtGuard, TheInterfaceHoldingTheListenAddressIsRefused) {
  FakeNetKernel kernel;
  kernel.ifaces["bond0"] = {};
  kernel.addresses["10.1.0.5"] = "bond0";
  FakeClock clock;
  MgmtGuard guard("", "10.1.0.5", clock);
  EXPECT_FALSE(guard.Admit("link_flap", {}, "bond0", "", kernel.host()).ok());
  EXPECT_TRUE(guard.Admit("link_flap", {}, "fab0", "", kernel.host()).ok());
}

TEST(MgmtGuard, APartitionFromTheControllerIsRefused) {
  FakeNetKernel kernel;
  FakeClock clock;
  MgmtGuard guard("mgmt0", "0.0.0.0", clock);
  Status s = guard.Admit("link_partition", {{"peers", {"198.18.0.2", "10.9.0.1"}}},
                         "peers:198.18.0.2,10.9.0.1", "10.9.0.1", kernel.host());
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("10.9.0.1, the controller's address"), std::string::npos)
      << s.message();
  EXPECT_TRUE(guard
                  .Admit("link_partition", {{"peers", {"198.18.0.2"}}}, "peers:198.18.0.2",
                         "10.9.0.1", kernel.host())
                  .ok());
}

// Issue 49: `peers: [0.0.0.0/0]` cut n1 off its controller for 4.6 s until
// its lease lapsed; the controller's own address was refused, a prefix
// holding it was not.
TEST(MgmtGuard, APartitionFromAPrefixHoldingTheControllerIsRefused) {
  FakeNetKernel kernel;
  FakeClock clock;
  MgmtGuard guard("mgmt0", "198.19.0.2", clock);
  for (const char* prefix : {"0.0.0.0/0", "198.19.0.0/24", "198.0.0.0/8", "198.19.0.254/32"}) {
    Status s =
        guard.Admit("link_partition", {{"peers", {"198.18.0.3", prefix}}},
                    std::string("peers:198.18.0.3,") + prefix, "198.19.0.254", kernel.host());
    EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << prefix;
    EXPECT_NE(s.message().find("198.19.0.254, the controller's address"), std::string::npos)
        << s.message();
  }
  // The listen address too, and the prefix is named.
  Status own = guard.Admit("link_partition", {{"peers", {"198.19.0.0/30"}}}, "peers:198.19.0.0/30",
                           "198.19.0.254", kernel.host());
  EXPECT_NE(own.message().find("198.19.0.0/30, a prefix that holds 198.19.0.2, the agent's own "
                               "listen address"),
            std::string::npos)
      << own.message();
  EXPECT_TRUE(guard
                  .Admit("link_partition", {{"peers", {"198.18.0.0/16"}}}, "peers:198.18.0.0/16",
                         "198.19.0.254", kernel.host())
                  .ok());
}

TEST(MgmtGuard, AnIbPortCarryingTheManagementIpoibIsRefused) {
  FakeNetKernel kernel;
  kernel.ifaces["ib0"] = {};
  kernel.routes["10.9.0.1"] = "ib0";  // management over IPoIB
  FakeSysFs sysfs;
  sysfs.files["/sys/class/infiniband/mlx5_0/device/net/ib0/mtu"] = "2044";
  FakeClock clock;
  MgmtGuard guard("", "0.0.0.0", clock);
  Host host{&kernel, &sysfs};
  Status s = guard.Admit("ib_port_disable", {{"device", "mlx5_0"}}, "mlx5_0/1", "10.9.0.1", host);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("carries ib0 (IPoIB)"), std::string::npos) << s.message();
  EXPECT_TRUE(
      guard.Admit("ib_port_disable", {{"device", "mlx5_1"}}, "mlx5_1/1", "10.9.0.1", host).ok());
}

TEST(MgmtGuard, ARouteThatCannotBeLookedUpRefuses) {
  FakeNetKernel kernel;
  kernel.FailNext({"ip", "-j", "route", "get"}, "RTNETLINK answers: Network is unreachable\n");
  FakeClock clock;
  MgmtGuard guard("mgmt0", "0.0.0.0", clock);
  Status s = guard.Admit("link_rate", {}, "fab0", "10.9.0.1", kernel.host());
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("Network is unreachable"), std::string::npos) << s.message();
}

TEST(MgmtGuard, PeerAddressDropsThePort) {
  EXPECT_EQ(PeerAddress("10.0.0.1:53122"), "10.0.0.1");
  EXPECT_EQ(PeerAddress("::1:7100"), "::1");
  EXPECT_EQ(PeerAddress("test"), "");
}

}  // namespace
}  // namespace fdrill

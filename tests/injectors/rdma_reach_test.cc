// injectors/rdma_reach.h against a fake sysfs laid out as the kernel does
// (Documentation/ABI/stable/sysfs-class-infiniband; a ConnectX port seen
// from its netdev): an IPoIB ib0 on mlx5_0 port 1, a RoCE eth2 on mlx5_1
// port 2 (dev_port 1), and a veth without an RDMA device.
#include "injectors/rdma_reach.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

using ::testing::HasSubstr;

class RdmaReach : public ::testing::Test {
 protected:
  RdmaReach() {
    fs_.files["/sys/class/net/ib0/device/infiniband/mlx5_0/node_guid"] = "0c42:a103:00fa:b000\n";
    fs_.files["/sys/class/net/ib0/dev_port"] = "0\n";
    fs_.files["/sys/class/infiniband/mlx5_0/ports/1/link_layer"] = "InfiniBand\n";
    fs_.files["/sys/class/net/eth2/device/infiniband/mlx5_1/node_guid"] = "0c42:a103:00fa:b001\n";
    fs_.files["/sys/class/net/eth2/dev_port"] = "1\n";
    fs_.files["/sys/class/infiniband/mlx5_1/ports/2/link_layer"] = "Ethernet\n";
    fs_.files["/sys/class/net/veth0/mtu"] = "1500\n";
  }
  Status Check(const char* kind, const Json& params) {
    return CheckReachesRdma(*FindInjector(kind), params, fs_);
  }
  FakeSysFs fs_;
};

TEST_F(RdmaReach, FindsThePortBehindANetdevAndItsLinkLayer) {
  auto ib = RdmaPortBehind(fs_, "ib0");
  ASSERT_TRUE(ib.ok() && ib->has_value()) << ib.status().ToString();
  EXPECT_EQ((*ib)->device, "mlx5_0");
  EXPECT_EQ((*ib)->port, 1);
  EXPECT_FALSE((*ib)->Roce());
  auto roce = RdmaPortBehind(fs_, "eth2");
  ASSERT_TRUE(roce.ok() && roce->has_value());
  EXPECT_EQ((*roce)->device, "mlx5_1");
  EXPECT_EQ((*roce)->port, 2);
  EXPECT_TRUE((*roce)->Roce());
  auto veth = RdmaPortBehind(fs_, "veth0");
  ASSERT_TRUE(veth.ok());
  EXPECT_FALSE(veth->has_value());
}

TEST_F(RdmaReach, ATcFaultOnIpoibIsRefusedNamingTheIbPortKinds) {
  Status s = Check("link_rate", {{"interface", "ib0"}, {"rate", "1gbit"}});
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("link_rate on ib0 reaches kernel TCP/IP (incl. IPoIB) only"));
  EXPECT_THAT(s.message(), HasSubstr("mlx5_0 port 1 (InfiniBand)"));
  EXPECT_THAT(s.message(),
              HasSubstr("Kinds that reach InfiniBand RDMA: ib_port_flap, ib_port_disable, "
                        "ib_port_width, ib_port_speed"));
  // ib0 down leaves the InfiniBand port up: link_down does not reach it either.
  EXPECT_FALSE(Check("link_down", {{"interface", "ib0"}}).ok());
}

TEST_F(RdmaReach, OnRoceTheLinkKindsReachAndTheNetfilterKindsDoNot) {
  EXPECT_TRUE(Check("link_flap", {{"interface", "eth2"}, {"down", "2s"}}).ok());
  EXPECT_TRUE(Check("link_down", {{"interface", "eth2"}}).ok());
  Status loss = Check("link_loss", {{"interface", "eth2"}, {"percent", 5}});
  ASSERT_FALSE(loss.ok());
  EXPECT_THAT(loss.message(), HasSubstr("Kinds that reach RoCE RDMA: link_flap, link_down"));
  // No interface: every netdev of the node counts, and one carries RDMA.
  EXPECT_FALSE(Check("link_partition", {{"peers", Json::array({"10.0.0.2"})}}).ok());
}

TEST_F(RdmaReach, ANetdevWithoutRdmaAndKindsOfOtherScopesPass) {
  EXPECT_TRUE(Check("link_rate", {{"interface", "veth0"}, {"rate", "1gbit"}}).ok());
  EXPECT_TRUE(Check("rank_pause", Json::object()).ok());
  EXPECT_TRUE(Check("ib_port_flap", {{"device", "mlx5_0"}}).ok());
}

TEST_F(RdmaReach, AnUnknownLinkLayerIsAnErrorNotAGuess) {
  fs_.files["/sys/class/infiniband/mlx5_0/ports/1/link_layer"] = "Omni-Path\n";
  Status s = Check("link_rate", {{"interface", "ib0"}, {"rate", "1gbit"}});
  EXPECT_THAT(s.message(), HasSubstr("neither InfiniBand nor Ethernet"));
}

}  // namespace
}  // namespace fdrill

#include "fabric/mpirun.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "fabric/fabric_state.h"

namespace fdrill {
namespace {

TEST(MpirunTest, HostfileListsFabricAddressesWithSlots) {
  auto state = PlanFabric(FabricLayout::Default(), 3, "/bin/agent");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(MpirunHostfile(*state, 2),
            "198.18.0.1 slots=2\n198.18.0.2 slots=2\n198.18.0.3 slots=2\n");
}

TEST(MpirunTest, ArgvLaunchesThroughFabricRshOverTheFabricSubnetOnly) {
  auto state = PlanFabric(FabricLayout::Default(), 4, "/bin/agent");
  ASSERT_TRUE(state.ok());
  auto argv =
      MpirunArgv(*state, 2, "/opt/fdrill/bin/fdrill", {"fdrill-collective", "-b", "4M", "-n", "20"},
                 "/run/fdrill/fabric/n0/tmp/hostfile");
  std::vector<std::string> expected = {"mpirun",
                                       "--allow-run-as-root",
                                       "-np",
                                       "8",
                                       "--hostfile",
                                       "/run/fdrill/fabric/n0/tmp/hostfile",
                                       "--map-by",
                                       "ppr:2:node",
                                       "--bind-to",
                                       "none",
                                       "--mca",
                                       "mpi_yield_when_idle",
                                       "1",
                                       "--mca",
                                       "plm_rsh_agent",
                                       "/opt/fdrill/bin/fdrill fabric rsh",
                                       "--mca",
                                       "rtc",
                                       "^hwloc",
                                       "--mca",
                                       "pml",
                                       "ob1",
                                       "--mca",
                                       "btl",
                                       "self,vader,tcp",
                                       "--mca",
                                       "btl_tcp_if_include",
                                       "198.18.0.0/24",
                                       "--mca",
                                       "oob_tcp_if_include",
                                       "198.18.0.0/24",
                                       "fdrill-collective",
                                       "-b",
                                       "4M",
                                       "-n",
                                       "20"};
  EXPECT_EQ(argv, expected);
}

TEST(MpirunTest, SubnetFollowsTheLayout) {
  FabricLayout layout = FabricLayout::Default();
  layout.fabric_net = "198.18.7";
  auto state = PlanFabric(layout, 2, "/bin/agent");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(FabricSubnets(*state), "198.18.7.0/24");
}

TEST(MpirunTest, EveryRailCarriesTheJob) {
  FabricShape shape;
  shape.nodes = 4;
  shape.rails = 2;
  auto state = PlanFabric(FabricLayout::Default(), shape, "/bin/agent");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(FabricSubnets(*state), "198.18.0.0/24,198.18.1.0/24");
  auto argv = MpirunArgv(*state, 1, "/f", {"prog"}, "/h");
  auto at = std::find(argv.begin(), argv.end(), "btl_tcp_if_include");
  ASSERT_NE(at, argv.end());
  EXPECT_EQ(*(at + 1), "198.18.0.0/24,198.18.1.0/24");
  // The hostfile names each node by rail 0's address, where `fabric rsh` finds it.
  EXPECT_EQ(MpirunHostfile(*state, 1).substr(0, 19), "198.18.0.1 slots=1\n");
}

}  // namespace
}  // namespace fdrill

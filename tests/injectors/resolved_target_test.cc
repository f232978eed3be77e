// Fault::ResolvedTarget for every kind of the registry: what the fault acts
// on, as the agent's apply reply and the run's summary.json name it. Never
// empty, and specific (an IB port, a GPU, a rank with its pid), not a guess
// from params.interface.
#include <string>

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_dcb.h"
#include "tests/fakes/fake_ethtool.h"
#include "tests/fakes/fake_ib.h"
#include "tests/fakes/fake_ib_switch.h"
#include "tests/fakes/fake_net.h"
#include "tests/fakes/fake_nvml.h"
#include "tests/fakes/fake_processes.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

std::string ResolvedOf(const std::string& kind, const Json& params, Host host) {
  return MakeOk(kind, params, host)->ResolvedTarget();
}

TEST(ResolvedTarget, NetworkKindsNameTheInterfaceOrThePeers) {
  FakeNetKernel k;
  const Host host{&k, nullptr};
  EXPECT_EQ(ResolvedOf("link_rate", {{"interface", "fab0"}, {"rate", "100mbit"}}, host), "fab0");
  EXPECT_EQ(ResolvedOf("link_flap", {{"interface", "fab1"}, {"down", "1s"}}, host), "fab1");
  EXPECT_EQ(ResolvedOf("link_loss", {{"interface", "fab0"}, {"percent", 5}}, host), "fab0");
  EXPECT_EQ(ResolvedOf("link_down", {{"interface", "fab0"}}, host), "fab0");
  EXPECT_EQ(ResolvedOf("link_delay", {{"interface", "fab0"}, {"delay", "20ms"}}, host), "fab0");
  EXPECT_EQ(ResolvedOf("link_partition", {{"interface", "fab0"}, {"peers", {"198.18.0.2"}}}, host),
            "fab0");
  EXPECT_EQ(ResolvedOf("link_partition", {{"peers", {"198.18.0.2", "198.18.0.4"}}}, host),
            "peers:198.18.0.2,198.18.0.4");
  // A switch's agent: the bridge whose every port goes down.
  EXPECT_EQ(ResolvedOf("switch_down", Json::object(), host), "br0");
  EXPECT_EQ(ResolvedOf("port_loss", {{"interface", "up0"}, {"percent", 5}}, host), "up0");
}

TEST(ResolvedTarget, IbPortKindsNameTheHcaPort) {
  FakeIbFabric fabric;
  EXPECT_EQ(ResolvedOf("ib_port_flap", {{"device", "mlx5_0"}, {"down", "1s"}}, fabric.host()),
            "mlx5_0/1");
  EXPECT_EQ(ResolvedOf("ib_port_disable", {{"device", "mlx5_0"}, {"port", 1}}, fabric.host()),
            "mlx5_0/1");
  EXPECT_EQ(ResolvedOf("ib_port_width", {{"device", "mlx5_0"}, {"width", "1x"}}, fabric.host()),
            "mlx5_0/1");
  EXPECT_EQ(ResolvedOf("ib_port_speed", {{"device", "mlx5_0"}, {"speed", "hdr"}}, fabric.host()),
            "mlx5_0/1");
}

TEST(ResolvedTarget, GpuKindsNameTheGpuOrEveryNvlink) {
  const Host host = FakeNvmlHost();
  EXPECT_EQ(ResolvedOf("gpu_clock_lock", {{"gpu", 1}, {"min_mhz", 900}, {"max_mhz", 900}}, host),
            "gpu1");
  EXPECT_EQ(ResolvedOf("gpu_power_cap", {{"gpu", 0}, {"watts", 300}}, host), "gpu0");
  EXPECT_EQ(ResolvedOf("nvlink_bw_mode", {{"mode", "half"}, {"gpu", 3}}, host), "gpu3");
  EXPECT_EQ(ResolvedOf("nvlink_bw_mode", {{"mode", "off"}}, host), "nvlink");
}

TEST(ResolvedTarget, RankKindsNameTheRanksCaptureSelected) {
  FakeProcessTable procs;
  procs.AddRank(1234, 2);
  procs.AddRank(1300, 3);
  const Host host{nullptr, nullptr, &procs};
  for (const char* kind : {"rank_pause", "rank_kill"}) {
    auto one = MakeFault(kind, {{"rank", 2}}, host);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    EXPECT_EQ((*one)->ResolvedTarget(), "rank 2");  // before Capture: what the params say
    ASSERT_TRUE((*one)->Capture().ok());
    EXPECT_EQ((*one)->ResolvedTarget(), "rank 2 (pid 1234)") << kind;
    auto all = MakeFault(kind, Json::object(), host);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ((*all)->ResolvedTarget(), "every rank on this node");
    ASSERT_TRUE((*all)->Capture().ok());
    EXPECT_EQ((*all)->ResolvedTarget(), "ranks 2, 3 (pids 1234, 1300)") << kind;
  }
}

TEST(ResolvedTarget, DaemonPauseNamesTheDaemonThenItsPid) {
  FakeProcessTable procs;
  procs.Add(777, "slurmd");
  const Host host{nullptr, nullptr, &procs};
  auto f = MakeFault("daemon_pause", {{"daemon", "slurmd"}}, host);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->ResolvedTarget(), "slurmd");
  ASSERT_TRUE((*f)->Capture().ok());
  EXPECT_EQ((*f)->ResolvedTarget(), "slurmd (pid 777)");
}

TEST(ResolvedTarget, NodeKindsNameTheNode) {
  Host host;
  host.launch_env_dir = "/nonexistent/fdrill-launch-env";  // nothing is written by MakeFault
  EXPECT_EQ(ResolvedOf("cpu_hog", {{"threads", 2}}, host), "node");
  EXPECT_EQ(ResolvedOf("mem_pressure", {{"size", "1G"}}, host), "node");
  EXPECT_EQ(ResolvedOf("nccl_env", {{"p2p_disable", true}}, host), "node");
}

TEST(ResolvedTarget, RoceKindsNameTheNetdevItsRdmaPortAndWhatOfIt) {
  FakeDcb dcb;  // eth2: mlx5_1 port 2, RoCE
  auto rate =
      MakeOk("roce_tc_rate", {{"interface", "eth2"}, {"tc", 3}, {"rate", "25gbit"}}, dcb.host());
  EXPECT_EQ(rate->ResolvedTarget(), "eth2 tc 3");
  ASSERT_TRUE(rate->Capture().ok());
  EXPECT_EQ(rate->ResolvedTarget(), "eth2 (mlx5_1/2 RoCE) tc 3");
  auto pfc = MakeOk("roce_pfc", {{"interface", "eth2"}, {"priorities", {3}}}, dcb.host());
  ASSERT_TRUE(pfc->Capture().ok());
  EXPECT_EQ(pfc->ResolvedTarget(), "eth2 (mlx5_1/2 RoCE) priority 3");
  FakeEthtool ethtool;  // eth2 at 100G; no sysfs: the netdev alone
  EXPECT_EQ(ResolvedOf("link_speed", {{"interface", "eth2"}, {"speed", 25000}}, ethtool.host()),
            "eth2");
}

TEST(ResolvedTarget, IbSwitchPortNamesTheSwitchPortAndTheHcaBehindIt) {
  FakeIbSwitchFabric fabric;  // gpu002 mlx5_0/1 on leaf02 (LID 2) port 19
  auto f = MakeOk("ib_switch_port", {{"hca", "gpu002 mlx5_0"}}, fabric.host());
  EXPECT_EQ(f->ResolvedTarget(), "switch port facing gpu002 mlx5_0 port 1");
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->ResolvedTarget(),
            "switch 0xb8cef60300a1b3c0 lid 2 port 19 (peer of gpu002 mlx5_0/1)");
}

// Every kind of the registry, from its row's example params, as `fdrill
// plan` makes it (no machine: Host{}): its parser takes them, it names a
// target before Capture, and it states its mechanism. A new kind is covered
// by its row; the tests above check what each kind names after Capture.
TEST(ResolvedTarget, EveryRegisteredKindNamesATargetFromItsExample) {
  for (const auto& info : Injectors()) {
    ASSERT_NE(info.example, nullptr) << info.name << " has no example params in its row";
    const Json params = Json::parse(info.example, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(params.is_discarded()) << info.name << ": its example is not JSON";
    auto fault = MakeFault(info.name, params, Host{});
    ASSERT_TRUE(fault.ok()) << info.name << ": its row's example params are refused: "
                            << fault.status().ToString();
    EXPECT_NE((*fault)->ResolvedTarget(), "") << info.name;
    EXPECT_FALSE((*fault)->Mechanism().empty()) << info.name;
  }
}

}  // namespace
}  // namespace fdrill

// DiscoverSoftware: the kernel, driver versions (an out-of-tree module's
// version, an in-tree one's srcversion) and transport sysctls, from a fake
// /proc/sys and /sys/module; and the real machine's answer.
#include "agents/software.h"

#include <gtest/gtest.h>

#include "tests/agents/test_agent.h"
#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

TEST(Software, KernelDriversAndSysctlsFromProcAndModules) {
  FakeSysFs fs;
  fs.SetAttrs("/proc/sys/kernel", {{"osrelease", "6.1.0-18-amd64"}});
  fs.SetAttrs("/sys/module/mlx5_core", {{"version", "24.10-1.1.4"}, {"srcversion", "ABC"}});
  fs.SetAttrs("/sys/module/ib_core", {{"srcversion", "8F2C11D0E5"}});
  fs.SetAttrs("/sys/module/nvidia", {{"version", "550.54.15"}});
  fs.SetAttrs("/proc/sys/net/ipv4", {{"tcp_congestion_control", "bbr"}});
  fs.files["/proc/sys/net/ipv4/tcp_rmem"] = "4096\t131072\t6291456\n";  // as the kernel prints it
  const Json sw = DiscoverSoftware(fs);
  EXPECT_EQ(sw["kernel"], "6.1.0-18-amd64");
  EXPECT_EQ(sw["modules"], (Json{{"mlx5_core", "24.10-1.1.4"},
                                 {"ib_core", "srcversion 8F2C11D0E5"},
                                 {"nvidia", "550.54.15"}}));
  EXPECT_EQ(sw["sysctl"], (Json{{"net.ipv4.tcp_congestion_control", "bbr"},
                                {"net.ipv4.tcp_rmem", "4096 131072 6291456"}}));
}

TEST(Software, NothingReadableIsEmptyNotAnError) {
  FakeSysFs fs;
  EXPECT_EQ(DiscoverSoftware(fs), (Json{{"modules", Json::object()}, {"sysctl", Json::object()}}));
}

TEST(Software, TheAgentsInventoryCarriesItAndItsOwnVersion) {
  FakeSysFs fs;
  fs.SetAttrs("/proc/sys/kernel", {{"osrelease", "6.1.0-18-amd64"}});
  FakeProcessRunner runner;
  FakeClock clock;
  const std::filesystem::path dir = ScratchPath("fdrill-software-test");
  std::filesystem::create_directories(dir);
  {
    AgentService service(TestAgentConfig("n1", dir), Host{&runner, &fs}, clock);
    const Json reply = service.Handle(MakeRequest("inventory", 1), "test");
    ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
    EXPECT_EQ(reply["software"]["kernel"], "6.1.0-18-amd64");
    EXPECT_TRUE(reply["software"]["fdrill"].is_string()) << reply.dump();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdrill

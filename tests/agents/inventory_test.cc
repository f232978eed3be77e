// DiscoverInventory against a fake sysfs tree and the fake NVML library, and
// the agent's `inventory` request on the fake host.
#include "agents/inventory.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/host/real_process_runner.h"
#include "tests/agents/test_agent.h"
#include "tests/fakes/fake_host.h"
#include "tests/fakes/fake_nvml.h"

namespace fdrill {
namespace {

constexpr char kIb[] = "/sys/class/infiniband/";

// Port PORT of HCA as sysfs shows it, with NETDEV on it (dev_port counts
// from 0); LID "" leaves the lid file out.
void SetPort(FakeSysFs& fs, const std::string& hca, int port, const std::string& netdev,
             const std::string& state, const std::string& phys_state, const std::string& link_layer,
             const std::string& rate, const std::string& lid = "") {
  const std::string dir = kIb + hca + "/ports/" + std::to_string(port);
  fs.SetAttrs(
      dir,
      {{"state", state}, {"phys_state", phys_state}, {"link_layer", link_layer}, {"rate", rate}});
  if (!lid.empty()) fs.SetAttrs(dir, {{"lid", lid}});
  fs.SetAttrs(kIb + hca + "/device/net/" + netdev, {{"dev_port", std::to_string(port - 1)}});
}

// Two HCAs as the kernel shows them: mlx5_0 one InfiniBand port (ib0);
// mlx5_1 a dual-port RoCE NIC (eth2 on port 1, down; eth3 on port 2), no
// fw_ver file; two NUMA nodes; mgmt0 a plain NIC; eth9 found only through
// its own device/infiniband link.
FakeSysFs TwoHcaNode() {
  FakeSysFs fs;
  fs.SetAttrs(
      std::string(kIb) + "mlx5_0",
      {{"node_guid", "b859:9f03:00d4:f3a6"}, {"fw_ver", "28.39.1002"}, {"device/numa_node", "0"}});
  SetPort(fs, "mlx5_0", 1, "ib0", "4: ACTIVE", "5: LinkUp", "InfiniBand", "400 Gb/sec (4X NDR)",
          "0x1a");
  fs.SetAttrs(std::string(kIb) + "mlx5_1",
              {{"node_guid", "0c42:a103:0007:1e00"}, {"device/numa_node", "1"}});
  SetPort(fs, "mlx5_1", 1, "eth2", "1: DOWN", "3: Disabled", "Ethernet", "2.5 Gb/sec (1X SDR)",
          "0x0");
  SetPort(fs, "mlx5_1", 2, "eth3", "4: ACTIVE", "5: LinkUp", "Ethernet", "100 Gb/sec (4X EDR)");
  const std::string net = "/sys/class/net/";
  fs.SetAttrs(net + "lo", {{"operstate", "unknown"}});
  fs.SetAttrs(net + "ib0",
              {{"operstate", "up"},
               {"speed", "400000"},
               {"mtu", "4092"},
               {"address", "00:00:10:49:fe:80:00:00:00:00:00:00:b8:59:9f:03:00:d4:f3:a6"},
               {"device/numa_node", "0"}});
  // -1: what the kernel prints for the speed of a link without carrier.
  fs.SetAttrs(net + "eth2", {{"operstate", "down"}, {"speed", "-1"}, {"mtu", "9000"}});
  fs.SetAttrs(net + "eth3", {{"operstate", "up"}, {"speed", "100000"}});
  fs.SetAttrs(
      net + "mgmt0",
      {{"operstate", "up"}, {"speed", "1000"}, {"mtu", "1500"}, {"address", "02:00:00:00:00:01"}});
  fs.SetAttrs(net + "eth9",
              {{"operstate", "up"}, {"device/infiniband/mlx5_9/node_guid", "0000:0000:0000:0009"}});
  fs.SetAttrs("/sys/devices/system/node",
              {{"online", "0-1"}, {"node1/cpulist", "32-63"}, {"node0/cpulist", "0-31"}});
  return fs;
}

const Json* Find(const Json& list, const std::string& key, const Json& value) {
  for (const auto& e : list) {
    if (e.value(key, Json()) == value) return &e;
  }
  return nullptr;
}

TEST(InventoryTest, HcasPortsNetdevsAndNuma) {
  FakeSysFs fs = TwoHcaNode();
  auto inv = DiscoverInventory(fs, nullptr);
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  const Json& hcas = (*inv)["hcas"];
  ASSERT_EQ(hcas.size(), 2u);

  const Json& ib = hcas[0];
  EXPECT_EQ(ib["name"], "mlx5_0");
  EXPECT_EQ(ib["node_guid"], "b859:9f03:00d4:f3a6");
  EXPECT_EQ(ib["fw_ver"], "28.39.1002");
  EXPECT_EQ(ib["numa_node"], 0);
  ASSERT_EQ(ib["ports"].size(), 1u);
  const Json& p = ib["ports"][0];
  EXPECT_EQ(p["port"], 1);
  EXPECT_EQ(p["state"], "ACTIVE");
  EXPECT_EQ(p["phys_state"], "LinkUp");
  EXPECT_EQ(p["link_layer"], "InfiniBand");
  EXPECT_EQ(p["rate"], "400 Gb/sec (4X NDR)");
  EXPECT_EQ(p["rate_gbps"], 400);
  EXPECT_EQ(p["lid"], 26);  // 0x1a
  EXPECT_EQ(p["netdevs"], Json::array({"ib0"}));

  const Json& roce = hcas[1];
  EXPECT_FALSE(roce.contains("fw_ver"));  // no file: left out
  EXPECT_EQ(roce["numa_node"], 1);
  ASSERT_EQ(roce["ports"].size(), 2u);
  EXPECT_EQ(roce["ports"][0]["state"], "DOWN");
  EXPECT_EQ(roce["ports"][0]["phys_state"], "Disabled");
  EXPECT_EQ(roce["ports"][0]["link_layer"], "Ethernet");
  EXPECT_EQ(roce["ports"][0]["rate_gbps"], 2.5);
  EXPECT_EQ(roce["ports"][0]["lid"], 0);
  EXPECT_EQ(roce["ports"][0]["netdevs"], Json::array({"eth2"}));  // dev_port 0 -> port 1
  EXPECT_EQ(roce["ports"][1]["netdevs"], Json::array({"eth3"}));  // dev_port 1 -> port 2
  EXPECT_FALSE(roce["ports"][1].contains("lid"));

  const Json& netdevs = (*inv)["netdevs"];
  EXPECT_EQ(Find(netdevs, "name", "lo"), nullptr);
  const Json* ib0 = Find(netdevs, "name", "ib0");
  ASSERT_NE(ib0, nullptr);
  EXPECT_EQ((*ib0)["operstate"], "up");
  EXPECT_EQ((*ib0)["speed_mbps"], 400000);
  EXPECT_EQ((*ib0)["mtu"], 4092);
  EXPECT_EQ((*ib0)["numa_node"], 0);
  EXPECT_EQ((*ib0)["ib_device"], "mlx5_0");
  const Json* eth2 = Find(netdevs, "name", "eth2");
  ASSERT_NE(eth2, nullptr);
  EXPECT_FALSE(eth2->contains("speed_mbps"));  // -1: no carrier
  EXPECT_EQ((*eth2)["ib_device"], "mlx5_1");
  const Json* mgmt = Find(netdevs, "name", "mgmt0");
  ASSERT_NE(mgmt, nullptr);
  EXPECT_EQ((*mgmt)["mac"], "02:00:00:00:00:01");
  EXPECT_FALSE(mgmt->contains("ib_device"));
  EXPECT_FALSE(mgmt->contains("numa_node"));
  const Json* eth9 = Find(netdevs, "name", "eth9");
  ASSERT_NE(eth9, nullptr);
  EXPECT_EQ((*eth9)["ib_device"], "mlx5_9");

  EXPECT_EQ((*inv)["numa"], Json::parse(R"([{"node":0,"cpus":"0-31"},{"node":1,"cpus":"32-63"}])"));
  EXPECT_TRUE((*inv)["gpus"].empty());
  EXPECT_NE((*inv)["nvml"].get<std::string>().find("not used"), std::string::npos);
}

TEST(InventoryTest, MissingRootsMeanNoneNotAnError) {
  FakeSysFs empty;
  auto inv = DiscoverInventory(empty, nullptr);
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ((*inv)["hcas"], Json::array());
  EXPECT_EQ((*inv)["netdevs"], Json::array());
  EXPECT_EQ((*inv)["numa"], Json::array());
}

// /proc/net/dev as the kernel prints it for a namespace with these links.
std::string ProcNetDev(const std::vector<std::string>& names) {
  std::string text =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
      "drop fifo colls carrier compressed\n";
  for (const auto& n : names) text += "  " + n + ": 100 1 0 0 0 0 0 0 200 2 0 0 0 0 0 0\n";
  return text;
}

// Issue 21: every emulated node listed the machine's eth0, fdm-br, ifb0:
// an agent whose /sys is not its namespace's still lists its own links.
TEST(InventoryTest, NetdevsAreTheAgentsOwnNamespacesEvenWhenSysfsShowsTheMachines) {
  FakeSysFs fs;
  for (const char* host_if : {"lo", "eth0", "fdm-br", "ifb0"})
    fs.SetAttrs(std::string("/sys/class/net/") + host_if, {{"operstate", "up"}, {"mtu", "1500"}});
  fs.files["/proc/net/dev"] = ProcNetDev({"lo", "mgmt0", "fab0"});
  auto inv = DiscoverInventory(fs, nullptr);
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  // The machine's sysfs describes none of them: each is its name alone.
  EXPECT_EQ((*inv)["netdevs"], Json::parse(R"([{"name": "fab0"}, {"name": "mgmt0"}])"));
}

TEST(InventoryTest, SysfsOfTheAgentsOwnNamespaceDescribesItsNetdevs) {
  FakeSysFs fs;
  fs.SetAttrs("/sys/class/net/lo", {{"operstate", "unknown"}});
  fs.SetAttrs("/sys/class/net/mgmt0", {{"operstate", "up"}, {"mtu", "1500"}});
  fs.SetAttrs("/sys/class/net/fab0", {{"operstate", "up"}, {"mtu", "9000"}});
  fs.files["/proc/net/dev"] = ProcNetDev({"lo", "mgmt0", "fab0"});
  auto inv = DiscoverInventory(fs, nullptr);
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ((*inv)["netdevs"], Json::parse(R"([{"name": "fab0", "operstate": "up", "mtu": 9000},
                                               {"name": "mgmt0", "operstate": "up", "mtu": 1500}])"));
}

TEST(InventoryTest, RootsComeFromThePaths) {
  FakeSysFs fs;
  fs.files["/fake/ib/mlx5_4/ports/1/state"] = "4: ACTIVE\n";
  fs.files["/sys/class/infiniband/mlx5_0/ports/1/state"] = "4: ACTIVE\n";
  auto inv = DiscoverInventory(fs, nullptr, {"/fake/ib", "/fake/net", "/fake/node"});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  ASSERT_EQ((*inv)["hcas"].size(), 1u);
  EXPECT_EQ((*inv)["hcas"][0]["name"], "mlx5_4");
}

TEST(InventoryTest, GpusAndNvLinksFromNvml) {
  FakeNvml fake;
  fake.Node(2);
  fake.Describe(0, "NVIDIA H100 80GB HBM3", "GPU-00000000-aaaa-bbbb-cccc-000000000000",
                "00000000:18:00.0");
  fake.Describe(1, "NVIDIA H100 80GB HBM3", "GPU-11111111-aaaa-bbbb-cccc-111111111111",
                "00000000:2A:00.0");
  fake.NvLink(0, 0, true, "00000000:05:00.0");
  fake.NvLink(0, 1, true, "00000000:06:00.0");
  fake.NvLink(0, 2, false);
  fake.NvLink(1, 0, true, "00000000:05:00.0");
  FakeSysFs fs;
  auto inv = DiscoverInventory(fs, &NvmlAt(NvmlLibraryPath()));
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ((*inv)["nvml"], "ok");
  const Json& gpus = (*inv)["gpus"];
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]["index"], 0);
  EXPECT_EQ(gpus[0]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpus[0]["uuid"], "GPU-00000000-aaaa-bbbb-cccc-000000000000");
  EXPECT_EQ(gpus[0]["pci_bus_id"], "00000000:18:00.0");
  EXPECT_EQ(gpus[0]["nvlinks"], Json::parse(R"([
      {"link":0,"state":"up","remote_pci_bus_id":"00000000:05:00.0"},
      {"link":1,"state":"up","remote_pci_bus_id":"00000000:06:00.0"},
      {"link":2,"state":"down"}])"));
  EXPECT_EQ(gpus[1]["pci_bus_id"], "00000000:2A:00.0");
  EXPECT_EQ(gpus[1]["nvlinks"].size(), 1u);
}

TEST(InventoryTest, AGpuFieldNvmlCannotReadIsLeftOut) {
  FakeNvml fake;
  fake.Node(1);
  fake.Set("gpu0.name", "NVIDIA A100-SXM4-80GB");
  FakeSysFs fs;
  auto inv = DiscoverInventory(fs, &NvmlAt(NvmlLibraryPath()));
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  const Json& g = (*inv)["gpus"][0];
  EXPECT_EQ(g["name"], "NVIDIA A100-SXM4-80GB");
  EXPECT_FALSE(g.contains("uuid"));
  EXPECT_FALSE(g.contains("pci_bus_id"));
  EXPECT_EQ(g["nvlinks"], Json::array());
}

TEST(InventoryTest, NvmlAbsentSaysWhyAndStillReadsSysfs) {
  Nvml missing("/nonexistent/fdrill-test/libnvidia-ml.so.1");
  FakeSysFs fs = TwoHcaNode();
  auto inv = DiscoverInventory(fs, &missing);
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ((*inv)["gpus"], Json::array());
  const std::string why = (*inv)["nvml"];
  EXPECT_NE(why.find("/nonexistent/fdrill-test/libnvidia-ml.so.1 not found"), std::string::npos)
      << why;
  EXPECT_EQ((*inv)["hcas"].size(), 2u);
}

TEST(InventoryTest, RealSysFsListsSortedNamesAndNotFound) {
  const std::filesystem::path dir = MakeTempDir("fdrill-list-");
  ASSERT_FALSE(dir.empty());
  std::filesystem::create_directories(dir / "b");
  std::ofstream(dir / "c") << "1";
  std::ofstream(dir / "a") << "1";
  RealSysFs fs;
  auto names = fs.List(dir.string());
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b", "c"}));
  auto missing = fs.List((dir / "nope").string());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

TEST(InventoryTest, FakeSysFsListsImmediateChildren) {
  FakeSysFs fs;
  fs.files["/r/x/1"] = "";
  fs.files["/r/x/2/deep"] = "";
  fs.files["/r/y"] = "";
  fs.files["/rr/z"] = "";
  ASSERT_TRUE(fs.MakeDir("/r/w").ok());
  auto names = fs.List("/r");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"w", "x", "y"}));
  EXPECT_EQ(fs.List("/r/x")->size(), 2u);
  EXPECT_EQ(fs.List("/nothing").status().code(), StatusCode::kNotFound);
}

// The fake host (fdrill-agent --fake-host) answers with its model machine,
// and the model's link state shows.
TEST(InventoryTest, FakeHostAgentAnswersItsModel) {
  FakeHostAgent agent("f7", "fdrill-inventory-agent-");
  Json r = agent.Call("inventory");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["node"], "f7");
  EXPECT_EQ(r["gpus"], Json::array());
  EXPECT_NE(r["nvml"].get<std::string>().find("not used"), std::string::npos);
  ASSERT_EQ(r["hcas"].size(), 1u);
  EXPECT_EQ(r["hcas"][0]["name"], "mlx5_0");
  EXPECT_EQ(r["hcas"][0]["ports"][0]["link_layer"], "Ethernet");
  EXPECT_EQ(r["hcas"][0]["ports"][0]["rate_gbps"], 100);
  EXPECT_EQ(r["hcas"][0]["ports"][0]["netdevs"], Json::array({"fab0"}));
  const Json* fab0 = Find(r["netdevs"], "name", "fab0");
  ASSERT_NE(fab0, nullptr);
  EXPECT_EQ((*fab0)["operstate"], "up");
  EXPECT_EQ((*fab0)["speed_mbps"], 100000);
  EXPECT_EQ((*fab0)["ib_device"], "mlx5_0");
  EXPECT_EQ(r["numa"], Json::parse(R"([{"node":0,"cpus":"0-7"}])"));

  Json down = agent.Apply("d", "link_down", {{"interface", "fab0"}});
  ASSERT_TRUE(down["ok"].get<bool>()) << down.dump();
  r = agent.Call("inventory");
  EXPECT_EQ((*Find(r["netdevs"], "name", "fab0"))["operstate"], "down");
  EXPECT_TRUE(agent.Call("revert_all")["ok"].get<bool>());
}

}  // namespace
}  // namespace fdrill

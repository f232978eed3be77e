// FormatInventoryTable (harness/cli): the node summary and the per-port
// table an operator reads after `fdrill inventory`.
#include "harness/cli/inventory_table.h"

#include <sstream>
#include <vector>

#include <gtest/gtest.h>

namespace fdrill {
namespace {

Json Cluster() {
  return Json::parse(R"js({"nodes": [
    {"node": "n1", "nvml": "ok",
     "gpus": [
       {"index": 0, "name": "NVIDIA H100 80GB HBM3", "nvlinks": [{"link": 0, "state": "up"}, {"link": 1, "state": "up"}]},
       {"index": 1, "name": "NVIDIA H100 80GB HBM3", "nvlinks": [{"link": 0, "state": "up"}, {"link": 1, "state": "down"}]}],
     "hcas": [
       {"name": "mlx5_0", "fw_ver": "28.39.1002", "numa_node": 0,
        "ports": [{"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "link_layer": "InfiniBand",
                   "rate": "400 Gb/sec (4X NDR)", "rate_gbps": 400, "lid": 26, "netdevs": ["ib0"]}]},
       {"name": "mlx5_1", "numa_node": 1,
        "ports": [{"port": 1, "state": "DOWN", "phys_state": "Disabled", "link_layer": "Ethernet",
                   "rate": "2.5 Gb/sec (1X SDR)", "rate_gbps": 2.5, "lid": 0, "netdevs": ["eth2", "eth2v"]}]}],
     "netdevs": [{"name": "ib0", "operstate": "up", "speed_mbps": 400000},
                 {"name": "eth2", "operstate": "down"},
                 {"name": "mgmt0", "operstate": "up", "speed_mbps": 2500},
                 {"name": "veth1", "operstate": "up"}],
     "numa": [{"node": 0, "cpus": "0-31"}]},
    {"node": "n2", "nvml": "libnvidia-ml.so.1 not found: cannot open shared object file",
     "gpus": [], "hcas": [], "netdevs": [{"name": "eth0", "operstate": "up", "speed_mbps": 100}], "numa": []},
    {"node": "n3", "error": "unavailable: connect 198.19.0.4:7100: Connection refused"}
  ]})js");
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The columns of a line split on runs of two or more spaces.
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    size_t gap = line.find("  ", i);
    out.push_back(line.substr(i, gap == std::string::npos ? std::string::npos : gap - i));
    if (gap == std::string::npos) break;
    i = line.find_first_not_of(' ', gap);
  }
  return out;
}

TEST(InventoryTableTest, OneRowPerNodeThenOneRowPerPortThenNotes) {
  auto lines = Lines(FormatInventoryTable(Cluster()));
  ASSERT_EQ(lines.size(), 11u) << FormatInventoryTable(Cluster());
  EXPECT_EQ(Cells(lines[0]),
            (std::vector<std::string>{"NODE", "GPUS", "NVLINK", "HCA PORTS", "NETDEVS"}));
  EXPECT_EQ(Cells(lines[1]),
            (std::vector<std::string>{"n1", "2x NVIDIA H100 80GB HBM3", "3/4",
                                      "mlx5_0/1 ACTIVE 400G IB, mlx5_1/1 DOWN 2.5G RoCE",
                                      "ib0 400G, eth2 down, mgmt0 2.5G, veth1 ?"}));
  EXPECT_EQ(Cells(lines[2]), (std::vector<std::string>{"n2", "-", "-", "-", "eth0 100M"}));
  EXPECT_EQ(Cells(lines[3]), (std::vector<std::string>{"n3", "-", "-", "-", "-"}));
  EXPECT_EQ(lines[4], "");
  EXPECT_EQ(Cells(lines[5]),
            (std::vector<std::string>{"NODE", "HCA", "PORT", "STATE", "PHYS", "RATE", "LAYER",
                                      "LID", "NETDEVS", "NUMA", "FW"}));
  EXPECT_EQ(Cells(lines[6]), (std::vector<std::string>{"n1", "mlx5_0", "1", "ACTIVE", "LinkUp",
                                                       "400 Gb/sec (4X NDR)", "InfiniBand", "26",
                                                       "ib0", "0", "28.39.1002"}));
  EXPECT_EQ(Cells(lines[7]), (std::vector<std::string>{"n1", "mlx5_1", "1", "DOWN", "Disabled",
                                                       "2.5 Gb/sec (1X SDR)", "Ethernet", "0",
                                                       "eth2,eth2v", "1", "-"}));
  EXPECT_EQ(lines[8], "");
  EXPECT_EQ(lines[9], "n2: NVML: libnvidia-ml.so.1 not found: cannot open shared object file");
  EXPECT_EQ(lines[10], "n3: unavailable: connect 198.19.0.4:7100: Connection refused");
}

TEST(InventoryTableTest, ColumnsLineUp) {
  auto lines = Lines(FormatInventoryTable(Cluster()));
  // Every row of the node table starts its NVLINK column where the header does.
  size_t col = lines[0].find("NVLINK");
  EXPECT_EQ(lines[1].find("3/4"), col);
  EXPECT_EQ(lines[2].substr(col, 1), "-");
  size_t rate = lines[5].find("RATE");
  EXPECT_EQ(lines[6].find("400 Gb/sec"), rate);
  EXPECT_EQ(lines[7].find("2.5 Gb/sec"), rate);
  for (const auto& l : lines)
    EXPECT_TRUE(l.empty() || l.back() != ' ') << "trailing space: [" << l << "]";
}

TEST(InventoryTableTest, MixedGpuModelsAndNoPortsAnywhere) {
  Json c = Json::parse(R"({"nodes": [{"node": "g1", "nvml": "ok", "hcas": [], "netdevs": [],
    "gpus": [{"index": 0, "name": "A", "nvlinks": []}, {"index": 1, "name": "B", "nvlinks": []},
             {"index": 2, "name": "A", "nvlinks": []}]}]})");
  auto lines = Lines(FormatInventoryTable(c));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(Cells(lines[1]), (std::vector<std::string>{"g1", "2x A, 1x B", "-", "-", "-"}));
  EXPECT_EQ(lines[3], "(no HCA ports)");
  EXPECT_EQ(lines.size(), 4u);  // NVML ok: no note
}

TEST(InventoryTableTest, SwitchesListTheirPortsWithWhatIsCabledAndTheRate) {
  Json c = Json::parse(R"({"nodes": [], "switches": [
    {"name": "rail0-leaf0", "role": "leaf", "rail": 0, "ports": [
      {"name": "swp0", "to": "n0:fab0", "rate_bps": 500000000},
      {"name": "up0", "to": "rail0-spine:dn0", "rate_bps": 1000000000}]},
    {"name": "sw", "role": "leaf", "rail": 0, "ports": [{"name": "swp1", "to": "n1:fab0",
      "rate_bps": 0}]}]})");
  auto lines = Lines(FormatSwitchTable(c));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(Cells(lines[0]), (std::vector<std::string>{"SWITCH", "ROLE", "RAIL", "PORTS"}));
  EXPECT_EQ(lines[1].substr(lines[0].find("PORTS")),
            "swp0 -> n0:fab0 500mbit, up0 -> rail0-spine:dn0 1gbit");
  EXPECT_EQ(lines[2].substr(lines[0].find("PORTS")), "swp1 -> n1:fab0");
  EXPECT_EQ(FormatSwitchTable(Json::parse(R"({"nodes": []})")), "");
}

}  // namespace
}  // namespace fdrill

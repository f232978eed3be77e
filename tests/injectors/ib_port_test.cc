// The IB port helpers: ibportstate's query output, sysfs formats, the probe.
#include "injectors/ib_port.h"

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_ib.h"

namespace fdrill {
namespace {

// `ibportstate -C mlx5_0 -P 1 3 1 query` on a ConnectX-7 (NDR), laid out as
// infiniband-diags/ibportstate.c show_port_info() and libibmad's
// mad_dump_field print it, including the Mellanox extended block whose field
// names repeat LinkSpeed* with hex values.
constexpr char kNdrQuery[] =
    "CA PortInfo:\n"
    "# Port info: Lid 3 port 1\n"
    "LinkState:.......................Active\n"
    "PhysLinkState:...................LinkUp\n"
    "Lid:.............................3\n"
    "SMLid:...........................1\n"
    "LMC:.............................0\n"
    "LinkWidthSupported:..............1X or 4X\n"
    "LinkWidthEnabled:................1X or 4X\n"
    "LinkWidthActive:.................4X\n"
    "LinkSpeedSupported:..............2.5 Gbps or 5.0 Gbps or 10.0 Gbps\n"
    "LinkSpeedEnabled:................2.5 Gbps or 5.0 Gbps or 10.0 Gbps\n"
    "LinkSpeedActive:.................Extended speed\n"
    "LinkSpeedExtSupported:...........14.0625 Gbps or 25.78125 Gbps or 53.125 Gbps or 106.25 Gbps\n"
    "LinkSpeedExtEnabled:.............14.0625 Gbps or 25.78125 Gbps or 53.125 Gbps or 106.25 Gbps\n"
    "LinkSpeedExtActive:..............106.25 Gbps\n"
    "Mkey:............................<not displayed>\n"
    "MkeyLeasePeriod:.................0\n"
    "ProtectBits:.....................0\n"
    "# MLNX ext Port info: Lid 3 port 1\n"
    "StateChangeEnable:...............0x00\n"
    "LinkSpeedSupported:..............0x01\n"
    "LinkSpeedEnabled:................0x01\n"
    "LinkSpeedActive:.................0x00\n";

TEST(IbPortQuery, ParsesTheRealFormatBackToMasks) {
  auto info = ParseIbPortInfo(kNdrQuery);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->link_state, "Active");
  EXPECT_EQ(info->phys_state, "LinkUp");
  EXPECT_EQ(info->Get("LinkWidthSupported"), 3);
  EXPECT_EQ(info->Get("LinkWidthEnabled"), 3);
  EXPECT_EQ(info->Get("LinkWidthActive"), 2);
  EXPECT_EQ(info->Get("LinkSpeedEnabled"), 7);  // not the MLNX block's 0x01
  EXPECT_EQ(info->Get("LinkSpeedActive"), 0);
  EXPECT_EQ(info->Get("LinkSpeedExtSupported"), 15);
  EXPECT_EQ(info->Get("LinkSpeedExtEnabled"), 15);
  EXPECT_EQ(info->Get("LinkSpeedExtActive"), 8);
}

TEST(IbPortQuery, OnlyTheFirstBlockCountsAndOddValuesDecode) {
  std::string set_output =
      "Initial CA/RT PortInfo:\n# Port info: Lid 3 port 1\n"
      "LinkState:.......................Active\nPhysLinkState:...................LinkUp\n"
      "LinkWidthSupported:..............1X or 4X or 2X (IBA extension)\n"
      "LinkWidthEnabled:................1X\n"
      "LinkSpeedSupported:..............2.5 Gbps or 10.0 Gbps (IBA extension)\n"
      "LinkSpeedEnabled:................2.5 Gbps\n"
      // an older libibmad names only FDR and EDR and prints the raw mask after
      "LinkSpeedExtSupported:...........14.0625 Gbps or 25.78125 Gbps or undefined (7)\n"
      "LinkSpeedExtEnabled:.............Extended link speeds disabled\n"
      "\nAfter PortInfo set:\n# Port info: Lid 3 port 1\n"
      "LinkWidthEnabled:................1X or 4X\n";
  auto info = ParseIbPortInfo(set_output);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->Get("LinkWidthSupported"), 19);
  EXPECT_EQ(info->Get("LinkWidthEnabled"), 1);
  EXPECT_EQ(info->Get("LinkSpeedSupported"), 5);
  EXPECT_EQ(info->Get("LinkSpeedExtSupported"), 7);
  EXPECT_EQ(info->Get("LinkSpeedExtEnabled"), 30);
  EXPECT_FALSE(info->Has("LinkWidthActive"));
}

TEST(IbPortQuery, RejectsOutputWithoutPortInfo) {
  EXPECT_FALSE(
      ParseIbPortInfo("ibwarn: [1234] mad_rpc_open_port: can't open UMAD port (mlx5_0:1)\n").ok());
  EXPECT_FALSE(ParseIbPortInfo("CA PortInfo:\nLinkWidthEnabled:................3 lanes\n").ok());
}

TEST(IbPortQuery, TheFakeFabricPrintsWhatTheParserReads) {
  FakeIbFabric fabric;
  auto out = fabric.Run({"ibportstate", "-C", "mlx5_0", "-P", "1", "3", "1", "query"}, {});
  ASSERT_TRUE(out.ok());
  auto info = ParseIbPortInfo(out->out);
  ASSERT_TRUE(info.ok()) << out->out;
  auto real = ParseIbPortInfo(kNdrQuery);
  for (const auto& [field, mask] : real->masks) EXPECT_EQ(info->Get(field), mask) << field;
}

TEST(IbPortSysfs, ReadsStateRateAndLid) {
  FakeIbFabric fabric;
  IbPort port;
  port.device = "mlx5_0";
  auto s = ReadIbPortStatus(&fabric.sysfs, port);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->state, 4);
  EXPECT_EQ(s->phys, 5);
  EXPECT_EQ(s->rate, "400 Gb/sec (4X NDR)");
  auto lid = ReadIbLid(&fabric.sysfs, port);
  ASSERT_TRUE(lid.ok());
  EXPECT_EQ(*lid, 3);
  port.device = "mlx5_7";
  auto missing = ReadIbPortStatus(&fabric.sysfs, port);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("mlx5_7/1"), std::string::npos);
  // ... and says what the node has, as `fdrill inventory` names it.
  EXPECT_NE(missing.status().message().find("does not exist; this node has mlx5_0/1)"),
            std::string::npos)
      << missing.status().message();
}

TEST(IbPortSysfs, ParsesKernelRateStrings) {
  auto ndr = ParseIbRate("400 Gb/sec (4X NDR)\n");
  ASSERT_TRUE(ndr.ok());
  EXPECT_EQ(ndr->gbps, 400);
  EXPECT_EQ(ndr->lanes, 4);
  EXPECT_EQ(ndr->speed, "NDR");
  auto sdr = ParseIbRate("2.5 Gb/sec (1X SDR)");
  ASSERT_TRUE(sdr.ok());
  EXPECT_EQ(sdr->gbps, 2.5);
  EXPECT_EQ(sdr->lanes, 1);
  EXPECT_EQ(sdr->speed, "SDR");
  EXPECT_FALSE(ParseIbRate("N/A").ok());
  EXPECT_LT(IbSpeedRank("QDR"), IbSpeedRank("FDR10"));
  EXPECT_LT(IbSpeedRank("FDR10"), IbSpeedRank("FDR"));
}

TEST(IbPortProbe, SaysWhyANodeCannotRunIt) {
  // The four ib_port_* kinds share it.
  const CapabilityProbe probe = FindInjector("ib_port_flap")->probe;
  for (const char* kind : {"ib_port_disable", "ib_port_width", "ib_port_speed"})
    EXPECT_EQ(FindInjector(kind)->probe, probe) << kind;
  FakeIbFabric fabric;
  EXPECT_TRUE(probe(Json::object(), fabric.host()).ok());
  EXPECT_TRUE(probe({{"device", "mlx5_0"}, {"port", 1}}, fabric.host()).ok());
  Status no_port = probe({{"device", "mlx5_0"}, {"port", 2}}, fabric.host());
  EXPECT_EQ(no_port.code(), StatusCode::kNotFound);
  EXPECT_NE(no_port.message().find("mlx5_0/2"), std::string::npos);
  fabric.sysfs.files[fabric.Dir("mlx5_0", 1) + "/link_layer"] = "Ethernet\n";
  Status roce = probe({{"device", "mlx5_0"}}, fabric.host());
  EXPECT_EQ(roce.code(), StatusCode::kUnsupported);
  EXPECT_NE(roce.message().find("RoCE"), std::string::npos);
  fabric.have_ibportstate = false;
  Status no_tool = probe(Json::object(), fabric.host());
  EXPECT_EQ(no_tool.code(), StatusCode::kUnsupported);
  EXPECT_NE(no_tool.message().find("ibportstate"), std::string::npos);
  FakeSysFs empty;
  Status no_ib = probe(Json::object(), Host{&fabric, &empty});
  EXPECT_EQ(no_ib.code(), StatusCode::kUnsupported);
  EXPECT_NE(no_ib.message().find("/sys/class/infiniband"), std::string::npos);
  EXPECT_TRUE(fabric.Mutations().empty());
}

}  // namespace
}  // namespace fdrill

// ib_port_width and ib_port_speed against FakeIbFabric.
#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_ib.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

Argv Ibp(Argv op) {
  Argv argv = {"ibportstate", "-C", "mlx5_0", "-P", "1", "3", "1"};
  argv.insert(argv.end(), op.begin(), op.end());
  return argv;
}

std::string Rate(FakeIbFabric& fabric) {
  return fabric.sysfs.files[fabric.Dir("mlx5_0", 1) + "/rate"];
}

TEST(IbPortWidth, NarrowsTo1XThenRestoresThePriorMaskWithExactArgv) {
  FakeIbFabric fabric;
  auto f =
      MakeOk("ib_port_width", {{"device", "mlx5_0"}, {"port", 1}, {"width", "1x"}}, fabric.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["prior"]["LinkWidthEnabled"], 3);
  EXPECT_EQ(f->Saved()["prior_rate"], "400 Gb/sec (4X NDR)");
  ASSERT_TRUE(f->Apply().ok());
  EXPECT_EQ(Rate(fabric), "100 Gb/sec (1X NDR)\n");
  ASSERT_TRUE(f->Verify().ok()) << f->Verify().ToString();
  EXPECT_FALSE(f->VerifyReverted().ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(Rate(fabric), "400 Gb/sec (4X NDR)\n");
  EXPECT_EQ(fabric.Mutations(), (std::vector<Argv>{Ibp({"width", "1"}), Ibp({"reset"}),
                                                   Ibp({"width", "3"}), Ibp({"reset"})}));
  EXPECT_EQ(fabric.calls.front(), Ibp({"query"}));  // Capture read PortInfo first
}

TEST(IbPortWidth, EnablesEveryNarrowerSupportedWidth) {
  FakeIbFabric fabric;
  fabric.port().width_supported = fabric.port().width_enabled = 1 | 2 | 8 | 16;  // 1X 4X 12X 2X
  fabric.port().active_lanes = 12;
  fabric.Sync();
  auto f = MakeOk("ib_port_width", {{"device", "mlx5_0"}, {"width", "4X"}}, fabric.host());
  ASSERT_TRUE(f->Capture().ok()) << f->Capture().ToString();
  EXPECT_EQ(f->Saved()["want"]["LinkWidthEnabled"], 1 | 2 | 16);
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(Rate(fabric), "400 Gb/sec (4X NDR)\n");
}

TEST(IbPortWidth, RefusesWhatItCannotDoOrUndo) {
  FakeIbFabric fabric;
  auto eight = MakeOk("ib_port_width", {{"device", "mlx5_0"}, {"width", "8x"}}, fabric.host());
  EXPECT_TRUE(ErrorContains(eight->Capture(), StatusCode::kUnsupported,  // a 1X-or-4X port
                            "does not support 8X"));
  auto same = MakeOk("ib_port_width", {{"device", "mlx5_0"}, {"width", "4x"}}, fabric.host());
  EXPECT_TRUE(
      ErrorContains(same->Capture(), StatusCode::kFailedPrecondition, "already runs at 4X"));
  fabric.port().state = 2;  // no SM: INIT
  fabric.Sync();
  auto init = MakeOk("ib_port_width", {{"device", "mlx5_0"}, {"width", "1x"}}, fabric.host());
  EXPECT_NE(init->Capture().message().find("ACTIVE"), std::string::npos);
  EXPECT_TRUE(fabric.Mutations().empty());
}

TEST(IbPortWidth, RevertAfterFailedResetAndAfterFailedWidthAndTwice) {
  {
    FakeIbFabric
        fabric;  // the mask was written, the reset failed: restore the mask, no retrain needed
    auto f = MakeOk("ib_port_width", {{"device", "mlx5_0"}, {"width", "1x"}}, fabric.host());
    ASSERT_TRUE(f->Capture().ok());
    fabric.FailNext(Ibp({"reset"}), "ibportstate: iberror: failed: smp set portinfo failed\n");
    ASSERT_FALSE(f->Apply().ok());
    ASSERT_TRUE(Reverted(*f));
    EXPECT_EQ(fabric.Mutations(),
              (std::vector<Argv>{Ibp({"width", "1"}), Ibp({"reset"}), Ibp({"width", "3"})}));
  }
  {
    FakeIbFabric fabric;  // nothing was written: Revert writes nothing
    auto f = MakeOk("ib_port_width", {{"device", "mlx5_0"}, {"width", "1x"}}, fabric.host());
    ASSERT_TRUE(f->Capture().ok());
    fabric.FailNext(Ibp({"width"}), "ibportstate: iberror: failed: smp set portinfo failed\n");
    ASSERT_FALSE(f->Apply().ok());
    ASSERT_TRUE(f->Revert().ok());
    ASSERT_TRUE(Reverted(*f));
    EXPECT_EQ(fabric.Mutations().size(), 1u);
  }
  {
    FakeIbFabric fabric;  // a link that settled downgraded after the masks came back is retrained
    auto f = MakeOk("ib_port_width", {{"device", "mlx5_0"}, {"width", "1x"}}, fabric.host());
    ASSERT_TRUE(CapturedAndApplied(*f));
    fabric.FailNext(Ibp({"reset"}), "ibportstate: iberror: failed: smp set portinfo failed\n");
    EXPECT_FALSE(f->Revert().ok());
    EXPECT_FALSE(f->VerifyReverted().ok());
    ASSERT_TRUE(Reverted(*f));      // masks already back: only the reset
    ASSERT_TRUE(f->Revert().ok());  // and now nothing
    EXPECT_EQ(fabric.Mutations(),
              (std::vector<Argv>{Ibp({"width", "1"}), Ibp({"reset"}), Ibp({"width", "3"}),
                                 Ibp({"reset"}), Ibp({"reset"})}));
  }
}

TEST(IbPortWidth, ParamsNameTheKeyAndRestoreReverts) {
  FakeIbFabric fabric;
  EXPECT_TRUE(RefusedNaming("ib_port_width", {{"device", "mlx5_0"}, {"width", "3x"}}, fabric.host(),
                            "width"));
  EXPECT_TRUE(RefusedNaming("ib_port_width", {{"device", "mlx5_0"}}, fabric.host(), "width"));

  Json record =
      JournalApplyAndDie("ib_port_width", {{"device", "mlx5_0"}, {"width", "1x"}}, fabric.host());
  ASSERT_TRUE(Reverted(*Restore(record, fabric.host())));
  EXPECT_EQ(Rate(fabric), "400 Gb/sec (4X NDR)\n");
}

TEST(IbPortSpeed, NdrToHdrThroughTheExtendedMaskWithExactArgv) {
  FakeIbFabric fabric;
  auto f = MakeOk("ib_port_speed", {{"device", "mlx5_0"}, {"speed", "hdr"}}, fabric.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  EXPECT_EQ(Rate(fabric), "200 Gb/sec (4X HDR)\n");
  ASSERT_TRUE(f->Verify().ok()) << f->Verify().ToString();
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(Rate(fabric), "400 Gb/sec (4X NDR)\n");
  EXPECT_EQ(fabric.Mutations(), (std::vector<Argv>{Ibp({"espeed", "7"}), Ibp({"reset"}),
                                                   Ibp({"espeed", "15"}), Ibp({"reset"})}));
}

TEST(IbPortSpeed, QdrTurnsExtendedSpeedsOffAndRestoresBothMasks) {
  FakeIbFabric fabric;
  auto f = MakeOk("ib_port_speed", {{"device", "mlx5_0"}, {"speed", "QDR"}}, fabric.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  EXPECT_EQ(Rate(fabric), "40 Gb/sec (4X QDR)\n");
  ASSERT_TRUE(f->Verify().ok()) << f->Verify().ToString();
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(fabric.Mutations(),
            (std::vector<Argv>{Ibp({"speed", "7", "espeed", "30"}), Ibp({"reset"}),
                               Ibp({"speed", "7", "espeed", "15"}), Ibp({"reset"})}));
}

TEST(IbPortSpeed, RefusesUnsupportedOrPointlessTargets) {
  FakeIbFabric fabric;
  fabric.port().extended = false;  // a QDR-only port
  fabric.port().active_speed = "QDR";
  fabric.Sync();
  auto ext = MakeOk("ib_port_speed", {{"device", "mlx5_0"}, {"speed", "fdr"}}, fabric.host());
  EXPECT_EQ(ext->Capture().code(), StatusCode::kFailedPrecondition);  // QDR is already below FDR
  auto ddr = MakeOk("ib_port_speed", {{"device", "mlx5_0"}, {"speed", "ddr"}}, fabric.host());
  ASSERT_TRUE(ddr->Capture().ok());
  EXPECT_FALSE(
      ddr->Saved()["want"].contains("LinkSpeedExtEnabled"));  // no extended speeds to turn off
  ASSERT_TRUE(ddr->Apply().ok());
  EXPECT_EQ(Rate(fabric), "20 Gb/sec (4X DDR)\n");
  ASSERT_TRUE(Reverted(*ddr));

  FakeIbFabric hdr_port;
  hdr_port.port().espeed_supported = hdr_port.port().espeed_enabled = 1 | 2 | 4;
  hdr_port.port().active_speed = "HDR";
  hdr_port.Sync();
  auto ndr = MakeOk("ib_port_speed", {{"device", "mlx5_0"}, {"speed", "ndr"}}, hdr_port.host());
  EXPECT_EQ(ndr->Capture().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(RefusedNaming("ib_port_speed", {{"device", "mlx5_0"}, {"speed", "xdr"}},
                            hdr_port.host(), "speed"));
}

TEST(IbPortSpeed, RevertAfterFailedApplyTwiceAndFromTheJournal) {
  FakeIbFabric fabric;
  Json params = {{"device", "mlx5_0"}, {"speed", "edr"}};
  auto f = MakeOk("ib_port_speed", params, fabric.host());
  ASSERT_TRUE(f->Capture().ok());
  fabric.FailNext(Ibp({"espeed"}), "ibportstate: iberror: failed: smp set portinfo failed\n");
  ASSERT_FALSE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(fabric.Mutations().size(), 1u);

  Json record = JournalApplyAndDie("ib_port_speed", params, fabric.host());
  EXPECT_EQ(Rate(fabric), "100 Gb/sec (4X EDR)\n");  // as the dead agent left it
  ASSERT_TRUE(Reverted(*Restore(record, fabric.host())));
  EXPECT_EQ(Rate(fabric), "400 Gb/sec (4X NDR)\n");
}

TEST(IbPortSpeed, MechanismTouchesNothing) {
  FakeIbFabric fabric;
  auto f =
      MakeOk("ib_port_speed", {{"device", "mlx5_0"}, {"speed", "hdr"}, {"lid", 3}}, fabric.host());
  auto lines = f->Mechanism();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("ibportstate -C mlx5_0 -P 1 3 1 query"), std::string::npos) << lines[0];
  EXPECT_TRUE(fabric.calls.empty());
}

}  // namespace
}  // namespace fdrill

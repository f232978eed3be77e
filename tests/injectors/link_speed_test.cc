// link_speed against FakeEthtool (tests/fakes/fake_ethtool.h): eth2, a 100G
// port up at 100000 Mb/s through autoneg whose switch port also runs 25G and
// 40G forced, with mlx5's habit of keeping a forced speed as its advertised
// modes and ethtool 6.1's of advertising every supported mode on a bare
// `autoneg on`. Real `ethtool` output of this machine's netdevs (testdata/)
// covers the refusals.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_ethtool.h"
#include "tests/fakes/fake_host.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

std::string Testdata(const std::string& name) {
  std::ifstream in(std::string(FDRILL_SOURCE_DIR) + "/tests/injectors/testdata/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const Json kParams = {{"interface", "eth2"}, {"speed", 25000}};

// `ethtool -s eth2 autoneg on advertise M on ...` with every mode of the
// 100G port on, as Revert writes it for a port found advertising them all.
Argv AllAdvertised() {
  Argv argv = {"ethtool", "-s", "eth2", "autoneg", "on", "advertise"};
  for (const auto& m : FakeEthtool::Port100G().supported) argv.insert(argv.end(), {m, "on"});
  return argv;
}

TEST(FakeEthtool, PrintsAsEthtool61Prints) {
  FakeEthtool e;
  EXPECT_EQ(e.Run({"ethtool", "eth2"}, std::chrono::seconds(1))->out,
            Testdata("ethtool-6.1-100g-autoneg.txt"));
  EXPECT_EQ(e.Run({"ethtool", "--version"}, std::chrono::seconds(1))->out,
            Testdata("ethtool-6.1-version.txt"));
  auto gone = e.Run({"ethtool", "nosuch0"}, std::chrono::seconds(1));
  EXPECT_EQ(gone->exit_code, 75);
  EXPECT_EQ(gone->out, Testdata("ethtool-6.1-no-device.stdout"));
  EXPECT_EQ(gone->err, Testdata("ethtool-6.1-no-device.stderr"));
}

TEST(LinkSpeed, ApplyVerifyRevertVerifyWithExactArgv) {
  FakeEthtool e;
  auto f = MakeOk("link_speed", kParams, e.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(e.calls, (std::vector<Argv>{{"ethtool", "eth2"}}));
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(FakeEthtool::LinkSpeed(e.ports["eth2"]), 25000u);
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(FakeEthtool::LinkSpeed(e.ports["eth2"]), 100000u);
  EXPECT_TRUE(ErrorContains(f->Verify(), "auto-negotiation is on, expected off"));
  std::vector<Argv> want = {
      {"ethtool", "-s", "eth2", "speed", "25000", "duplex", "full", "autoneg", "off"},
      AllAdvertised()};
  EXPECT_EQ(e.Mutations(), want);
}

TEST(LinkSpeed, AutonegOnAloneIsNotARestoreOfAPortAdvertisingFewerModes) {
  // Why Revert names every mode: after a forced speed the port advertises
  // that speed's modes (mlx5), and a bare `autoneg on` makes ethtool 6.1
  // advertise every supported one, not the two 100G modes found here.
  FakeEthtool e;
  e.ports["eth2"].advertised = {"100000baseSR4/Full", "100000baseCR4/Full"};
  auto f = MakeOk("link_speed", kParams, e.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  EXPECT_EQ(e.ports["eth2"].advertised,
            (std::vector<std::string>{"25000baseCR/Full", "25000baseSR/Full"}));
  ASSERT_EQ(e.Run({"ethtool", "-s", "eth2", "autoneg", "on"}, std::chrono::seconds(1))->exit_code,
            0);
  EXPECT_EQ(e.ports["eth2"].advertised.size(), 10u);
  EXPECT_TRUE(ErrorContains(f->VerifyReverted(), "advertising 10 link modes; expected on and 2"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(e.ports["eth2"].advertised,
            (std::vector<std::string>{"100000baseSR4/Full", "100000baseCR4/Full"}));
}

TEST(LinkSpeed, APortFoundForcedIsForcedBackAndAdvertisingIsRestoredExactly) {
  FakeEthtool e;
  FakeEthtool::Port& p = e.ports["eth2"];
  p.autoneg = false;
  p.forced_mbps = 100000;
  p.advertised = {"100000baseSR4/Full", "100000baseCR4/Full"};
  auto forced = MakeOk("link_speed", {{"interface", "eth2"}, {"speed", "40g"}}, e.host());
  ASSERT_TRUE(forced->Capture().ok());
  ASSERT_TRUE(AppliedAndVerified(*forced));
  ASSERT_TRUE(Reverted(*forced));
  EXPECT_EQ(e.Mutations().back(),
            (Argv{"ethtool", "-s", "eth2", "speed", "100000", "duplex", "full", "autoneg", "off"}));
  // Autoneg advertising only the 100G and 25G modes: each supported mode on or off as found.
  FakeEthtool a;
  a.ports["eth2"].advertised = {"25000baseCR/Full", "100000baseCR4/Full"};
  auto g = MakeOk("link_speed", {{"interface", "eth2"}, {"speed", "40gbit"}}, a.host());
  ASSERT_TRUE(g->Capture().ok());
  ASSERT_TRUE(AppliedAndVerified(*g));
  ASSERT_TRUE(Reverted(*g));
  Argv want = {"ethtool", "-s", "eth2", "autoneg", "on", "advertise"};
  for (const auto& m : FakeEthtool::Port100G().supported)
    want.insert(want.end(),
                {m, m == "25000baseCR/Full" || m == "100000baseCR4/Full" ? "on" : "off"});
  EXPECT_EQ(a.Mutations().back(), want);
  EXPECT_EQ(a.ports["eth2"].advertised,
            (std::vector<std::string>{"25000baseCR/Full", "100000baseCR4/Full"}));
}

TEST(LinkSpeed, VerifySaysWhenThePartnerDoesNotRunTheForcedSpeed) {
  FakeEthtool e;  // the switch port runs 50G only through autoneg
  auto f = MakeOk("link_speed", {{"interface", "eth2"}, {"speed", 50000}}, e.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  EXPECT_TRUE(ErrorContains(f->Verify(),
                            "the link is down after forcing 50000 Mb/s: still training, or the "
                            "link partner does not run 50000 Mb/s with auto-negotiation off"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(FakeEthtool::LinkSpeed(e.ports["eth2"]), 100000u);
}

TEST(LinkSpeed, RefusesWhatItCannotDoOrWouldNotChange) {
  FakeEthtool e;
  auto odd = MakeOk("link_speed", {{"interface", "eth2"}, {"speed", 5000}}, e.host());
  EXPECT_TRUE(ErrorContains(odd->Capture(), StatusCode::kUnsupported,
                            "no supported link mode runs at 5000 Mb/s (supported speeds in Mb/s: "
                            "1000, 10000, 25000, 40000, 50000, 100000)"));
  auto same = MakeOk("link_speed", {{"interface", "eth2"}, {"speed", "100g"}}, e.host());
  EXPECT_TRUE(ErrorContains(same->Capture(), StatusCode::kFailedPrecondition,
                            "already runs at 100000 Mb/s, at or below 100000 Mb/s"));
  e.ports["eth2"].cable = false;
  auto down = MakeOk("link_speed", kParams, e.host());
  EXPECT_TRUE(ErrorContains(down->Capture(), StatusCode::kFailedPrecondition,
                            "the link is down (Link detected: no)"));
  auto gone = MakeOk("link_speed", {{"interface", "eth9"}, {"speed", 25000}}, e.host());
  EXPECT_TRUE(ErrorContains(gone->Capture(), StatusCode::kNotFound, "no interface \"eth9\""));
  EXPECT_TRUE(e.Mutations().empty());
}

TEST(LinkSpeed, RefusesTheNetdevsOfThisMachineAsEthtool61ShowsThem) {
  // Real output (testdata/): a veth (10000Mb/s, no link modes, no link), a
  // virtio NIC ("Speed: Unknown!"), the loopback (no link settings at all).
  const std::pair<std::string, std::string> cases[] = {
      {Testdata("ethtool-6.1-veth.txt"), "the link is down (Link detected: no)"},
      {Testdata("ethtool-6.1-virtio-no-speed.txt"), "\"Speed: Unknown!\""},
      {"Settings for lo:\n\tLink detected: yes\n", "reports no link settings"}};
  for (const auto& [out, words] : cases) {
    FakeProcessRunner runner;
    runner.OnOutput({"ethtool", "eth0"}, out);
    auto f = MakeOk("link_speed", {{"interface", "eth0"}, {"speed", 1000}}, Host{&runner});
    EXPECT_TRUE(ErrorContains(f->Capture(), words)) << out;
  }
  // Link up but no supported link modes reported: nothing to force.
  std::string up = Testdata("ethtool-6.1-veth.txt");
  up.replace(up.find("Link detected: no"), 17, "Link detected: yes");
  FakeProcessRunner runner;
  runner.OnOutput({"ethtool", "eth0"}, up);
  auto f = MakeOk("link_speed", {{"interface", "eth0"}, {"speed", 1000}}, Host{&runner});
  EXPECT_TRUE(
      ErrorContains(f->Capture(), StatusCode::kUnsupported, "reports no supported link modes"));
}

TEST(LinkSpeed, RevertTwiceAndRevertWithoutApplyTouchNothing) {
  FakeEthtool e;
  auto f = MakeOk("link_speed", kParams, e.host());
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, e));
  EXPECT_EQ(e.Mutations().size(), 2u);
}

TEST(LinkSpeed, RevertAfterFailedApplyLeavesTheFoundState) {
  FakeEthtool e;
  auto f = MakeOk("link_speed", kParams, e.host());
  ASSERT_TRUE(f->Capture().ok());
  e.FailNext({"ethtool", "-s"}, "netlink error: Operation not permitted\n");
  ASSERT_TRUE(ErrorContains(f->Apply(), "Operation not permitted"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(e.Mutations().size(), 1u);  // only the failed -s
}

TEST(LinkSpeed, RestoredFromJournalRevertsWhatALostAgentApplied) {
  FakeEthtool e;
  Json record = JournalApplyAndDie("link_speed", kParams, e.host());
  ASSERT_EQ(FakeEthtool::LinkSpeed(e.ports["eth2"]), 25000u);
  auto restored = Restore(record, e.host());
  EXPECT_EQ(restored->Saved(), record["saved"]);
  ASSERT_TRUE(Reverted(*restored));
  EXPECT_EQ(FakeEthtool::LinkSpeed(e.ports["eth2"]), 100000u);
  EXPECT_EQ(e.Mutations().back(), AllAdvertised());
}

TEST(LinkSpeed, SpeedIsMbpsOrGbpsOrARate) {
  FakeEthtool e;
  for (const Json& speed :
       {Json(25000), Json("25000"), Json("25g"), Json("25G"), Json("25gbit"), Json("25000mbit")}) {
    auto f = MakeOk("link_speed", {{"interface", "eth2"}, {"speed", speed}}, e.host());
    EXPECT_EQ(f->Mechanism()[1], "apply: ethtool -s eth2 speed 25000 duplex full autoneg off")
        << speed;
  }
  auto f = MakeOk("link_speed", {{"interface", "eth2"}, {"speed", "2.5g"}}, e.host());
  EXPECT_EQ(f->Mechanism()[1], "apply: ethtool -s eth2 speed 2500 duplex full autoneg off");
  EXPECT_TRUE(RefusedNaming("link_speed", {{"interface", "eth2"}}, e.host(), "speed", "required"));
  for (const Json& bad :
       {Json("fast"), Json(-1), Json(0), Json("25mbps"), Json("1500kbit"), Json(true)}) {
    EXPECT_TRUE(
        RefusedNaming("link_speed", {{"interface", "eth2"}, {"speed", bad}}, e.host(), "speed"))
        << bad;
  }
  EXPECT_TRUE(RefusedNaming("link_speed", {{"speed", 25000}}, e.host(), "interface"));
  EXPECT_TRUE(ErrorContains(
      ParamsError("link_speed", {{"interface", "eth2"}, {"speed", 25000}, {"duplex", "full"}},
                  e.host()),
      "duplex"));
  EXPECT_TRUE(e.calls.empty());
}

TEST(LinkSpeed, MechanismAndResolvedTarget) {
  FakeEthtool e;
  FakeSysFs sysfs;
  sysfs.files["/sys/class/net/eth2/device/infiniband/mlx5_1/node_guid"] = "0c42:a103:00fa:b001\n";
  sysfs.files["/sys/class/net/eth2/dev_port"] = "0\n";
  sysfs.files["/sys/class/infiniband/mlx5_1/ports/1/link_layer"] = "Ethernet\n";
  auto f = MakeOk("link_speed", kParams, Host{&e, &sysfs});
  EXPECT_EQ(f->ResolvedTarget(), "eth2");
  auto before = f->Mechanism();
  ASSERT_EQ(before.size(), 3u);
  EXPECT_EQ(before[0], "capture: ethtool eth2");
  EXPECT_EQ(before[2].rfind("revert: ethtool -s eth2 autoneg on advertise MODE on|off", 0), 0u);
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->ResolvedTarget(), "eth2 (mlx5_1/1 RoCE)");
  EXPECT_EQ(f->Mechanism()[2], "revert: " + JoinArgv(AllAdvertised()));
  EXPECT_TRUE(e.Mutations().empty());
}

TEST(LinkSpeed, ProbeNeedsEthtoolAndTheNetdev) {
  FakeEthtool e;
  FakeSysFs sysfs;
  sysfs.files["/sys/class/net/eth2/mtu"] = "9000\n";
  EXPECT_TRUE(FindInjector("link_speed")->probe({{"interface", "eth2"}}, Host{&e, &sysfs}).ok());
  EXPECT_TRUE(
      ErrorContains(FindInjector("link_speed")->probe({{"interface", "eth9"}}, Host{&e, &sysfs}),
                    StatusCode::kNotFound, "eth9"));
  FakeProcessRunner failing;
  failing.On({"ethtool"}, ProcessResult{1, "", ""});
  EXPECT_TRUE(ErrorContains(FindInjector("link_speed")->probe(Json::object(), Host{&failing}),
                            StatusCode::kUnsupported, "`ethtool --version` exited 1"));
}

}  // namespace
}  // namespace fdrill

// ib_switch_port against FakeIbSwitchFabric: this node is gpu001 (mlx5_0/1
// on leaf01 port 1); gpu002's mlx5_0/1 hangs off leaf02 (LID 2) port 19.
#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_ib_switch.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;

const Argv kSwDiscover = {"ibnetdiscover", "-p", "-C", "mlx5_0", "-P", "1"};
const Argv kSwQuery = {"smpquery", "-C", "mlx5_0", "-P", "1", "portinfo", "2", "19"};
const Argv kSwDisable = {"ibportstate", "-C", "mlx5_0", "-P", "1", "2", "19", "disable"};
const Argv kSwEnable = {"ibportstate", "-C", "mlx5_0", "-P", "1", "2", "19", "enable"};
const Json kGpu002 = {{"hca", "gpu002 mlx5_0"}};

// A node with infiniband-diags' other tools but no smpquery.
class WithoutSmpquery final : public ProcessRunner {
 public:
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration) override {
    if (argv[0] == "smpquery") return ProgramMissing(argv[0]);
    return ProcessResult{0, "", argv[0] + " BUILD VERSION: 44.0\n"};
  }
};

TEST(IbSwitchPort, DisablesTheSwitchPortFacingTheHcaWithExactArgv) {
  FakeIbSwitchFabric fabric;
  auto f = MakeOk("ib_switch_port", kGpu002, fabric.host());
  EXPECT_EQ(f->Target(), "switch port facing gpu002 mlx5_0 port 1");
  EXPECT_EQ(f->ResolvedTarget(), "switch port facing gpu002 mlx5_0 port 1");
  ASSERT_TRUE(f->Capture().ok()) << f->Capture().ToString();
  EXPECT_EQ(fabric.calls, (std::vector<Argv>{kSwDiscover, kSwQuery}));
  EXPECT_EQ(f->ResolvedTarget(),
            "switch 0xb8cef60300a1b3c0 lid 2 port 19 (peer of gpu002 mlx5_0/1)");
  EXPECT_TRUE(ErrorContains(f->Verify(), "PhysLinkState is LinkUp, expected Disabled"));
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(fabric.state(2, 19).phys, "Disabled");
  EXPECT_TRUE(ErrorContains(f->VerifyReverted(), "still disabled"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(fabric.state(2, 19).link, "Active");
  EXPECT_EQ(fabric.Mutations(), (std::vector<Argv>{kSwDisable, kSwEnable}));
  EXPECT_EQ(fabric.calls.back(), kSwQuery);  // VerifyReverted observes the switch
  EXPECT_TRUE(fabric.sysfs.writes.empty());
}

TEST(IbSwitchPort, MechanismNamesTheCommandsBeforeAndAfterCapture) {
  FakeIbSwitchFabric fabric;
  auto f = MakeOk("ib_switch_port", kGpu002, fabric.host());
  EXPECT_EQ(f->Mechanism(),
            (std::vector<std::string>{
                "capture: ibnetdiscover -p -C '<first ACTIVE HCA>' -P '<its port>'; smpquery -C "
                "'<first ACTIVE HCA>' -P '<its port>' portinfo '<switch LID>' '<switch port>'",
                "apply: ibportstate -C '<first ACTIVE HCA>' -P '<its port>' '<switch LID>' "
                "'<switch port>' disable",
                "revert: ibportstate -C '<first ACTIVE HCA>' -P '<its port>' '<switch LID>' "
                "'<switch port>' enable"}));
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Mechanism(),
            (std::vector<std::string>{
                "capture: " + JoinArgv(kSwDiscover) + "; " + JoinArgv(kSwQuery),
                "apply: " + JoinArgv(kSwDisable), "revert: " + JoinArgv(kSwEnable)}));
  auto flap = MakeOk("ib_switch_port",
                     {{"switch_lid", 2},
                      {"switch_port", 19},
                      {"device", "mlx5_0"},
                      {"local_port", 1},
                      {"down", "2s"}},
                     fabric.host());
  EXPECT_EQ(flap->Mechanism()[1], "apply: " + JoinArgv(kSwDisable) +
                                      ", then after 2s: " + JoinArgv(kSwEnable) + " (once)");
}

TEST(IbSwitchPort, VerifyReadsPhysLinkStateAsIbsimLeavesLinkStateActive) {
  FakeIbSwitchFabric fabric;
  fabric.ibsim_keeps_link_state = true;
  auto f = MakeOk("ib_switch_port", {{"guid", "0xb8cef60300000201"}}, fabric.host());
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(fabric.state(2, 19).link, "Active");
  ASSERT_TRUE(Reverted(*f));
}

TEST(IbSwitchPort, VerifyRevertedWaitsForTheLinkAndTheSubnetManager) {
  FakeIbSwitchFabric fabric;
  fabric.retrains = false;
  auto f = MakeOk("ib_switch_port", kGpu002, fabric.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Revert().ok());
  Status s = f->VerifyReverted();
  EXPECT_TRUE(ErrorContains(s, StatusCode::kFailedPrecondition,
                            "LinkState is Down (PhysLinkState Polling), expected Active"));
  EXPECT_TRUE(ErrorContains(s, "subnet manager"));
  ASSERT_TRUE(f->Revert().ok());  // a retry does not re-enable a port that is training
  EXPECT_EQ(fabric.Mutations().size(), 2u);
  fabric.subnet_manager = false;
  fabric.Train(2, 19);
  EXPECT_TRUE(ErrorContains(f->VerifyReverted(), "LinkState is Initialize"));
  fabric.subnet_manager = true;
  fabric.Train(2, 19);  // the SM sweeps
  EXPECT_TRUE(f->VerifyReverted().ok());
}

TEST(IbSwitchPort, RevertIsSafeAfterAFailedApplyAndTwice) {
  FakeIbSwitchFabric fabric;
  auto f = MakeOk("ib_switch_port", kGpu002, fabric.host());
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, fabric));
  EXPECT_EQ(fabric.Mutations(), (std::vector<Argv>{kSwDisable, kSwEnable}));

  FakeIbSwitchFabric failing;
  auto g = MakeOk("ib_switch_port", kGpu002, failing.host());
  ASSERT_TRUE(g->Capture().ok());
  failing.FailNext({"ibportstate"}, "ibwarn: [4242] mad_rpc: _do_madrpc failed; dport (Lid 2)\n");
  ASSERT_TRUE(ErrorContains(g->Apply(), "_do_madrpc failed"));
  ASSERT_TRUE(Reverted(*g));
  EXPECT_EQ(failing.Mutations().size(), 1u);  // the port is up: nothing to enable

  // A disable whose reply was lost still disabled the port: Revert sees it.
  FakeIbSwitchFabric lost;
  auto h = MakeOk("ib_switch_port", kGpu002, lost.host());
  ASSERT_TRUE(h->Capture().ok());
  lost.FailNext({"ibportstate"}, "");
  lost.state(2, 19) = {"Down", "Disabled"};
  ASSERT_FALSE(h->Apply().ok());
  ASSERT_TRUE(Reverted(*h));
  EXPECT_EQ(lost.Mutations().back(), kSwEnable);
}

TEST(IbSwitchPort, ToolErrorsCarryTheIberrorLineFromStdout) {
  FakeIbSwitchFabric fabric;
  auto f = MakeOk("ib_switch_port", {{"switch_lid", 2}, {"switch_port", 19}}, fabric.host());
  ASSERT_TRUE(f->Capture().ok());
  fabric.state(1, 39).phys = fabric.state(1, 40).phys = "Disabled";  // leaf02 is cut off
  Status s = f->Apply();
  EXPECT_TRUE(ErrorContains(s,
                            "exited 255: ibportstate: iberror: failed: smp query nodeinfo "
                            "failed; ibwarn: [4242] mad_rpc: _do_madrpc failed; dport (Lid 2)"));
  EXPECT_TRUE(ErrorStartsWith(s, "ib_switch_port switch 0xb8cef60300a1b3c0 lid 2 port 19"));
}

TEST(IbSwitchPort, RefusesTheSwitchPortThisNodeHangsOff) {
  FakeIbSwitchFabric fabric;
  for (const Json& params :
       {Json{{"switch_lid", 1}, {"switch_port", 1}}, Json{{"hca", "gpu001 mlx5_0"}},
        Json{{"guid", "0xb8cef60300000101"}}}) {
    auto f = MakeOk("ib_switch_port", params, fabric.host());
    Status s = f->Capture();
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << params.dump();
    EXPECT_TRUE(ErrorContains(s, "run the fault from another node")) << params.dump();
  }
  Status s = MakeOk("ib_switch_port", {{"switch_lid", "0x1"}, {"switch_port", 1}}, fabric.host())
                 ->Capture();
  EXPECT_TRUE(ErrorContains(s,
                            "switch 0xb8cef60300a1b2c0 lid 1 port 1 is where this node's own "
                            "port mlx5_0/1 (0xb8cef60300000101) is linked"));
  EXPECT_TRUE(fabric.Mutations().empty());
  EXPECT_EQ(fabric.state(1, 1).phys, "LinkUp");
}

TEST(IbSwitchPort, ADualPortNodeMayDisableItsOtherPortsSwitchPort) {
  FakeIbSwitchFabric fabric;
  fabric.sysfs.files.clear();
  fabric.SetLocal("mlx5_0", 1, 0xb8cef60300000301);  // this node is gpu003, port 1 on leaf01
  auto other = MakeOk("ib_switch_port", {{"hca", "gpu003 mlx5_0"}, {"port", 2}}, fabric.host());
  ASSERT_TRUE(other->Capture().ok()) << other->Capture().ToString();
  EXPECT_EQ(other->ResolvedTarget(),
            "switch 0xb8cef60300a1b3c0 lid 2 port 3 (peer of gpu003 mlx5_0/2)");
  ASSERT_TRUE(AppliedAndVerified(*other));  // the SMPs still leave by port 1
  ASSERT_TRUE(Reverted(*other));
  auto own = MakeOk("ib_switch_port", {{"hca", "gpu003 mlx5_0"}, {"port", 1}}, fabric.host());
  EXPECT_TRUE(ErrorContains(own->Capture(), "run the fault from another node"));
}

TEST(IbSwitchPort, RefusesAPortNotActiveAlreadyDisabledOrFacingASwitch) {
  FakeIbSwitchFabric fabric;
  fabric.state(2, 19) = {"Initialize", "LinkUp"};
  EXPECT_TRUE(ErrorContains(MakeOk("ib_switch_port", kGpu002, fabric.host())->Capture(),
                            StatusCode::kFailedPrecondition, "is Initialize/LinkUp"));
  fabric.state(2, 19) = {"Down", "Disabled"};
  EXPECT_TRUE(ErrorContains(
      MakeOk("ib_switch_port", {{"switch_lid", 2}, {"switch_port", 19}}, fabric.host())->Capture(),
      "already disabled"));
  // Behind a disabled port the HCA is not discovered: the error says how to name the port.
  EXPECT_TRUE(ErrorContains(MakeOk("ib_switch_port", kGpu002, fabric.host())->Capture(),
                            StatusCode::kNotFound, "params.switch_lid and switch_port"));
  EXPECT_TRUE(ErrorContains(
      MakeOk("ib_switch_port", {{"switch_lid", 1}, {"switch_port", 39}}, fabric.host())->Capture(),
      "inter-switch link"));
  EXPECT_TRUE(ErrorContains(
      MakeOk("ib_switch_port", {{"switch_lid", 1}, {"switch_port", 5}}, fabric.host())->Capture(),
      "is Down/Polling"));
  EXPECT_TRUE(ErrorContains(
      MakeOk("ib_switch_port", {{"switch_lid", 9}, {"switch_port", 1}}, fabric.host())->Capture(),
      StatusCode::kNotFound, "params.switch_lid"));
  EXPECT_TRUE(fabric.Mutations().empty());
}

TEST(IbSwitchPort, AnUnknownHcaListsWhatIbnetdiscoverSaw) {
  FakeIbSwitchFabric fabric;
  Status s = MakeOk("ib_switch_port", {{"hca", "gpu02 mlx5_0"}}, fabric.host())->Capture();
  EXPECT_TRUE(ErrorContains(s, StatusCode::kNotFound,
                            "params.hca: ibnetdiscover from mlx5_0/1 "
                            "saw no HCA \"gpu02 mlx5_0\""));
  EXPECT_TRUE(ErrorContains(s, "did you mean \"gpu002 mlx5_0\""));
  EXPECT_TRUE(ErrorContains(s, "\"gpu001 mlx5_0\", \"gpu002 mlx5_0\", \"gpu003 mlx5_0\""));
  EXPECT_TRUE(ErrorContains(
      MakeOk("ib_switch_port", {{"hca", "gpu002 mlx5_0"}, {"port", 2}}, fabric.host())->Capture(),
      "params.port: ibnetdiscover from mlx5_0/1 saw HCA \"gpu002 mlx5_0\" with port(s) 1"));
  EXPECT_TRUE(ErrorContains(
      MakeOk("ib_switch_port", {{"guid", "0xb8cef603000009ff"}}, fabric.host())->Capture(),
      "params.guid: ibnetdiscover from mlx5_0/1 saw no HCA port 0xb8cef603000009ff"));
}

TEST(IbSwitchPort, SendsFromTheFirstActiveIbPortOrTheOneGiven) {
  FakeIbSwitchFabric fabric;
  fabric.sysfs.files.clear();
  fabric.SetLocal("mlx5_2", 1, 0xb8cef60300000101);
  fabric.sysfs.SetAttrs("/sys/class/infiniband/mlx5_0/ports/1", {{"state", "4: ACTIVE"},
                                                                 {"phys_state", "5: LinkUp"},
                                                                 {"link_layer", "Ethernet"},
                                                                 {"rate", "100 Gb/sec (4X EDR)"}});
  fabric.sysfs.SetAttrs("/sys/class/infiniband/mlx5_1/ports/1", {{"state", "2: INIT"},
                                                                 {"phys_state", "5: LinkUp"},
                                                                 {"link_layer", "InfiniBand"},
                                                                 {"rate", "200 Gb/sec (4X HDR)"}});
  auto f = MakeOk("ib_switch_port", kGpu002, fabric.host());
  ASSERT_TRUE(f->Capture().ok()) << f->Capture().ToString();
  EXPECT_EQ(fabric.calls.front(), (Argv{"ibnetdiscover", "-p", "-C", "mlx5_2", "-P", "1"}));
  EXPECT_EQ(f->Saved()["local_device"], "mlx5_2");

  auto init =
      MakeOk("ib_switch_port", {{"hca", "gpu002 mlx5_0"}, {"device", "mlx5_1"}, {"local_port", 1}},
             fabric.host());
  EXPECT_TRUE(ErrorContains(init->Capture(), "local port mlx5_1/1 is 2: INIT"));
  auto none =
      MakeOk("ib_switch_port", {{"hca", "gpu002 mlx5_0"}, {"device", "mlx5_1"}}, fabric.host());
  EXPECT_TRUE(ErrorContains(none->Capture(),
                            "no ACTIVE InfiniBand port here to send the SMPs "
                            "from (mlx5_1/1 2: INIT)"));
  auto missing =
      MakeOk("ib_switch_port", {{"hca", "gpu002 mlx5_0"}, {"device", "mlx5_7"}}, fabric.host());
  EXPECT_TRUE(ErrorContains(missing->Capture(), StatusCode::kNotFound, "params.device"));
}

TEST(IbSwitchPort, SavedLoadsBackAndAJournalReplayEnablesThePort) {
  FakeIbSwitchFabric fabric;
  auto f = MakeOk("ib_switch_port", kGpu002, fabric.host());
  ASSERT_TRUE(f->Capture().ok());
  const Json saved = f->Saved();
  EXPECT_EQ(saved, (Json{{"local_device", "mlx5_0"},
                         {"local_port", 1},
                         {"switch_lid", 2},
                         {"switch_port", 19},
                         {"switch_guid", "0xb8cef60300a1b3c0"},
                         {"peer", "gpu002 mlx5_0/1"},
                         {"prior_link_state", "Active"}}));
  auto g = MakeOk("ib_switch_port", kGpu002, fabric.host());
  ASSERT_TRUE(g->Load(saved).ok());
  EXPECT_EQ(g->Saved(), saved);
  EXPECT_EQ(g->ResolvedTarget(), f->ResolvedTarget());

  Json record = JournalApplyAndDie("ib_switch_port", kGpu002, fabric.host());
  fabric.calls.clear();
  ASSERT_TRUE(Reverted(*Restore(record, fabric.host())));
  EXPECT_EQ(fabric.Mutations(), (std::vector<Argv>{kSwEnable}));
  for (const auto& call : fabric.calls)  // gpu002 is not discoverable now: none is run
    EXPECT_NE(call.front(), "ibnetdiscover");

  auto never = MakeOk("ib_switch_port", kGpu002, fabric.host());
  ASSERT_TRUE(never->Load(Json::object()).ok());
  EXPECT_TRUE(Reverted(*never));  // nothing captured, nothing to revert
}

TEST(IbSwitchPort, FlapsDisableForDownThenEnable) {
  FakeIbSwitchFabric fabric;
  auto f = MakeOk("ib_switch_port", {{"hca", "gpu002 mlx5_0"}, {"down", "3s"}}, fabric.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Verify().ok());
  ASSERT_TRUE(f->Tick(milliseconds(2999)).ok());
  EXPECT_EQ(fabric.state(2, 19).phys, "Disabled");
  ASSERT_TRUE(f->Tick(milliseconds(3000)).ok());
  EXPECT_EQ(fabric.state(2, 19).phys, "LinkUp");
  ASSERT_TRUE(f->Verify().ok()) << f->Verify().ToString();
  EXPECT_TRUE(f->Finished(milliseconds(3000)));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(fabric.Mutations(), (std::vector<Argv>{kSwDisable, kSwEnable}));

  FakeIbSwitchFabric three;
  auto g = MakeOk("ib_switch_port",
                  {{"hca", "gpu002 mlx5_0"}, {"down", "1s"}, {"count", 3}, {"period", "4s"}},
                  three.host());
  ASSERT_TRUE(CapturedAndApplied(*g));
  for (int ms = 0; ms <= 13000; ms += 500) ASSERT_TRUE(g->Tick(milliseconds(ms)).ok());
  EXPECT_EQ(three.Mutations().size(), 6u);
}

TEST(IbSwitchPort, ParamsNameTheKey) {
  FakeIbSwitchFabric fabric;
  auto expect_key = [&](const Json& params, const std::string& key) {
    EXPECT_TRUE(RefusedNaming("ib_switch_port", params, fabric.host(), key)) << params.dump();
  };
  expect_key(Json::object(), "hca");
  expect_key({{"hca", ""}}, "hca");
  expect_key({{"hca", "a"}, {"guid", "0x1"}}, "guid");
  expect_key({{"hca", "a"}, {"switch_lid", 2}, {"switch_port", 1}}, "switch_lid");
  expect_key({{"guid", "0x1"}, {"port", 1}}, "port");
  expect_key({{"hca", "a"}, {"port", 0}}, "port");
  expect_key({{"guid", "gpu002"}}, "guid");
  expect_key({{"guid", "0x0"}}, "guid");
  expect_key({{"switch_lid", 2}}, "switch_port");
  expect_key({{"switch_port", 19}}, "switch_lid");
  expect_key({{"switch_lid", 0xC000}, {"switch_port", 1}}, "switch_lid");
  expect_key({{"switch_lid", 2}, {"switch_port", 0}}, "switch_port");
  expect_key({{"hca", "a"}, {"local_port", 1}}, "local_port");
  expect_key({{"hca", "a"}, {"device", "mlx5_0/1"}}, "device");
  expect_key({{"hca", "a"}, {"count", 2}}, "count");
  expect_key({{"hca", "a"}, {"down", "3s"}, {"count", 2}, {"period", "2s"}}, "period");
  expect_key({{"hca", "a"}, {"dwon", "3s"}}, "dwon");
  EXPECT_TRUE(fabric.calls.empty());
}

TEST(IbSwitchPort, ProbeNeedsTheThreeToolsAndAnIbPort) {
  FakeIbSwitchFabric fabric;
  const InjectorInfo* info = FindInjector("ib_switch_port");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->scope, Scope::kIbPort);
  EXPECT_EQ(info->reach, kReachIbRdma | kReachKernelIp);
  EXPECT_TRUE(info->probe(Json::object(), fabric.host()).ok());
  EXPECT_EQ(fabric.calls, (std::vector<Argv>{
                              {"ibnetdiscover", "-V"}, {"smpquery", "-V"}, {"ibportstate", "-V"}}));

  WithoutSmpquery none;
  Status s = info->probe(Json::object(), Host{&none, &fabric.sysfs});
  EXPECT_TRUE(ErrorContains(s, StatusCode::kUnsupported, "needs smpquery (infiniband-diags)"));

  FakeSysFs roce;
  roce.SetAttrs("/sys/class/infiniband/mlx5_0/ports/1", {{"link_layer", "Ethernet"}});
  EXPECT_EQ(info->probe(Json::object(), Host{&fabric, &roce}).code(), StatusCode::kUnsupported);
  FakeSysFs empty;
  EXPECT_EQ(info->probe(Json::object(), Host{&fabric, &empty}).code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace fdrill

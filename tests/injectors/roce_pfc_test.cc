// roce_pfc against FakeDcb (tests/fakes/fake_dcb.h): eth2, a ConnectX port
// with PFC on for priority 3 (RoCE's lossless class), and veth0 without DCB.
#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_dcb.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

const Json kParams = {{"interface", "eth2"}, {"priorities", {3}}};

TEST(RocePfc, ApplyVerifyRevertVerifyWithExactArgv) {
  FakeDcb dcb;
  dcb.devs["eth2"].pfc[5] = true;  // another lossless priority, left alone
  auto f = MakeOk("roce_pfc", kParams, dcb.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(dcb.calls, (std::vector<Argv>{{"dcb", "-j", "pfc", "show", "dev", "eth2"}}));
  EXPECT_EQ(f->ResolvedTarget(), "eth2 (mlx5_1/2 RoCE) priority 3");
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_FALSE(dcb.devs["eth2"].pfc[3]);
  EXPECT_TRUE(dcb.devs["eth2"].pfc[5]);
  ASSERT_TRUE(Reverted(*f));
  EXPECT_TRUE(dcb.devs["eth2"].pfc[3]);
  EXPECT_TRUE(ErrorContains(f->Verify(), "PFC reads back on for priority 3, expected off"));
  std::vector<Argv> want = {{"dcb", "pfc", "set", "dev", "eth2", "prio-pfc", "3:off"},
                            {"dcb", "pfc", "set", "dev", "eth2", "prio-pfc", "3:on"}};
  EXPECT_EQ(dcb.Mutations(), want);
}

TEST(RocePfc, SeveralPrioritiesOnRestoresEachAsFound) {
  FakeDcb dcb;  // 3 on, 4 off
  auto f = MakeOk("roce_pfc", {{"interface", "eth2"}, {"priorities", {3, 4}}, {"state", "on"}},
                  dcb.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["prior_prio_pfc"],
            Json::array({false, false, false, true, false, false, false, false}));
  ASSERT_TRUE(AppliedAndVerified(*f));
  ASSERT_TRUE(Reverted(*f));
  std::vector<Argv> want = {{"dcb", "pfc", "set", "dev", "eth2", "prio-pfc", "3:on", "4:on"},
                            {"dcb", "pfc", "set", "dev", "eth2", "prio-pfc", "3:on", "4:off"}};
  EXPECT_EQ(dcb.Mutations(), want);
  EXPECT_FALSE(dcb.devs["eth2"].pfc[4]);
}

TEST(RocePfc, RefusesANoOp) {
  FakeDcb dcb;
  auto f = MakeOk("roce_pfc", {{"interface", "eth2"}, {"priorities", {0, 1}}}, dcb.host());
  EXPECT_TRUE(
      ErrorContains(f->Capture(), StatusCode::kFailedPrecondition,
                    "PFC is already off for priorities 0,1; the fault would change nothing"));
  auto on =
      MakeOk("roce_pfc", {{"interface", "eth2"}, {"priorities", 3}, {"state", "on"}}, dcb.host());
  EXPECT_TRUE(ErrorContains(on->Capture(), StatusCode::kFailedPrecondition,
                            "PFC is already on for priority 3"));
  EXPECT_TRUE(dcb.Mutations().empty());
}

TEST(RocePfc, RefusesANetdevWithoutDcb) {
  FakeDcb dcb;
  auto veth = MakeOk("roce_pfc", {{"interface", "veth0"}, {"priorities", {3}}}, dcb.host());
  EXPECT_TRUE(ErrorContains(veth->Capture(), StatusCode::kUnsupported,
                            "roce_pfc veth0: veth0 has no DCB support in its driver (`dcb -j pfc "
                            "show dev veth0`: Attribute read: Operation not supported)"));
  auto gone = MakeOk("roce_pfc", {{"interface", "eth9"}, {"priorities", {3}}}, dcb.host());
  EXPECT_TRUE(ErrorContains(gone->Capture(), StatusCode::kNotFound, "no interface \"eth9\""));
}

TEST(RocePfc, RevertTwiceAndRevertWithoutApplyTouchNothing) {
  FakeDcb dcb;
  auto f = MakeOk("roce_pfc", kParams, dcb.host());
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, dcb));
  EXPECT_EQ(dcb.Mutations().size(), 2u);
}

TEST(RocePfc, RevertAfterFailedApplyLeavesTheFoundState) {
  FakeDcb dcb;
  auto f = MakeOk("roce_pfc", kParams, dcb.host());
  ASSERT_TRUE(f->Capture().ok());
  dcb.FailNext({"dcb", "pfc", "set"}, "Attribute write: Operation not permitted\n");
  ASSERT_TRUE(ErrorContains(f->Apply(), "Operation not permitted"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(dcb.Mutations().size(), 1u);  // only the failed set
  // The netdev gone by the time Revert runs: nothing left to restore.
  ASSERT_TRUE(f->Apply().ok());
  dcb.devs.erase("eth2");
  EXPECT_TRUE(f->Revert().ok());
}

TEST(RocePfc, RestoredFromJournalRevertsWhatALostAgentApplied) {
  FakeDcb dcb;
  Json record = JournalApplyAndDie("roce_pfc", kParams, dcb.host());
  ASSERT_FALSE(dcb.devs["eth2"].pfc[3]);
  auto restored = Restore(record, dcb.host());
  EXPECT_EQ(restored->Saved(), record["saved"]);
  ASSERT_TRUE(Reverted(*restored));
  EXPECT_TRUE(dcb.devs["eth2"].pfc[3]);
  EXPECT_TRUE(ErrorContains(
      RestoreFault(
          {{"kind", "roce_pfc"}, {"params", kParams}, {"saved", {{"prior_prio_pfc", {1}}}}},
          dcb.host())
          .status(),
      "saved.prior_prio_pfc"));
}

TEST(RocePfc, ParamsValidateAndNameTheKey) {
  FakeDcb dcb;
  EXPECT_TRUE(
      RefusedNaming("roce_pfc", {{"interface", "eth2"}}, dcb.host(), "priorities", "required"));
  EXPECT_TRUE(RefusedNaming("roce_pfc", {{"interface", "eth2"}, {"priorities", {8}}}, dcb.host(),
                            "priorities", "not 8"));
  EXPECT_TRUE(RefusedNaming("roce_pfc", {{"interface", "eth2"}, {"priorities", {3, 3}}}, dcb.host(),
                            "priorities", "3 is listed twice"));
  EXPECT_TRUE(RefusedNaming("roce_pfc", {{"interface", "eth2"}, {"priorities", Json::array()}},
                            dcb.host(), "priorities"));
  EXPECT_TRUE(RefusedNaming("roce_pfc", {{"interface", "eth2"}, {"priorities", "three"}},
                            dcb.host(), "priorities"));
  EXPECT_TRUE(RefusedNaming("roce_pfc",
                            {{"interface", "eth2"}, {"priorities", {3}}, {"state", "lossy"}},
                            dcb.host(), "state", "off or on"));
  EXPECT_TRUE(RefusedNaming("roce_pfc", {{"priorities", {3}}}, dcb.host(), "interface"));
  EXPECT_TRUE(
      ErrorContains(ParamsError("roce_pfc", {{"interface", "eth2"}, {"priority", {3}}}, dcb.host()),
                    "params.priorities"));
  EXPECT_TRUE(dcb.calls.empty());
}

TEST(RocePfc, MechanismNamesTheExactArgv) {
  FakeDcb dcb;
  auto f = MakeOk("roce_pfc", {{"interface", "eth2"}, {"priorities", {3, 4}}}, dcb.host());
  EXPECT_EQ(f->Mechanism(),
            (std::vector<std::string>{"capture: dcb -j pfc show dev eth2",
                                      "apply: dcb pfc set dev eth2 prio-pfc 3:off 4:off",
                                      "revert: dcb pfc set dev eth2 prio-pfc 3:<as found> "
                                      "4:<as found>"}));
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Mechanism()[2], "revert: dcb pfc set dev eth2 prio-pfc 3:on 4:off");
  EXPECT_TRUE(dcb.Mutations().empty());
}

TEST(RocePfc, ProbeNeedsDcbAndTheNetdev) {
  FakeDcb dcb;
  EXPECT_TRUE(FindInjector("roce_pfc")->probe({{"interface", "eth2"}}, dcb.host()).ok());
  EXPECT_TRUE(ErrorContains(FindInjector("roce_pfc")->probe({{"interface", "eth9"}}, dcb.host()),
                            StatusCode::kNotFound, "no /sys/class/net/eth9"));
  EXPECT_TRUE(FindInjector("roce_pfc")->probe(Json::object(), Host{&dcb}).ok());
}

}  // namespace
}  // namespace fdrill

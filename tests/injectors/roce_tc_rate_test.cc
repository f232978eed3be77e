// roce_tc_rate against FakeDcb (tests/fakes/fake_dcb.h): a ConnectX port
// eth2 (mlx5_1 port 2, RoCE) and a veth0 without DCB. The fake prints what
// Debian 12's dcb 6.1 prints (the first test holds it to the samples in
// testdata/) and writes rates as dcb 6.1 does, bytes/s into the kernel's
// kbit/s, or as 6.18 does when told so.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "injectors/roce_netdev.h"
#include "tests/fakes/fake_dcb.h"
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

// A machine without iproute2's dcb: every exec fails as RealProcessRunner's does.
class NoDcb final : public ProcessRunner {
 public:
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration) override {
    return ProgramMissing(argv[0]);
  }
};

const Json kParams = {{"interface", "eth2"}, {"tc", 3}, {"rate", "25gbit"}};
const Argv kNoCaps = {"dcb",    "maxrate", "set",    "dev",    "eth2",   "tc-maxrate", "0:0bit",
                      "1:0bit", "2:0bit",  "3:0bit", "4:0bit", "5:0bit", "6:0bit",     "7:0bit"};

TEST(FakeDcb, PrintsWhatDebian12sDcbPrints) {
  FakeDcb dcb;
  auto out = [&](const Argv& argv) { return dcb.Run(argv, std::chrono::seconds(1)); };
  EXPECT_EQ(out({"dcb", "-V"})->out, Testdata("dcb-6.1-version.txt"));
  EXPECT_EQ(out({"dcb", "-j", "maxrate", "show", "dev", "eth2"})->out,
            Testdata("dcb-6.1-maxrate-uncapped.json"));
  EXPECT_EQ(out({"dcb", "-j", "pfc", "show", "dev", "eth2"})->out,
            Testdata("dcb-6.1-pfc-prio3-on.json"));
  dcb.devs["eth2"].maxrate_kbps[3] = 25'000'000;  // a 25 Gbit/s cap, as the kernel holds it
  EXPECT_EQ(out({"dcb", "-j", "maxrate", "show", "dev", "eth2"})->out,
            Testdata("dcb-6.1-maxrate-tc3-25g.json"));
  auto no_dcb = out({"dcb", "-j", "pfc", "show", "dev", "veth0"});
  EXPECT_EQ(no_dcb->exit_code, 1);
  EXPECT_EQ(no_dcb->err, Testdata("dcb-6.1-no-dcb.stderr"));
  EXPECT_EQ(out({"dcb", "-j", "maxrate", "show", "dev", "nosuch0"})->err,
            Testdata("dcb-6.1-no-device.stderr"));
  dcb.devs["eth2"].has_maxrate = false;
  EXPECT_EQ(out({"dcb", "-j", "maxrate", "show", "dev", "eth2"})->err,
            Testdata("dcb-6.1-no-maxrate.stderr"));
}

TEST(FakeDcb, Dcb61GivenTheRateAsWrittenCapsAt125TimesIt) {
  // What fdrill avoids: dcb 6.1 hands the kernel 3125000000 kbit/s for
  // 25gbit, which mlx5's u8 of Gbit/s wraps to 53 Gbit/s.
  FakeDcb dcb;
  ASSERT_EQ(dcb.Run({"dcb", "maxrate", "set", "dev", "eth2", "tc-maxrate", "3:25gbit"},
                    std::chrono::seconds(1))
                ->exit_code,
            0);
  EXPECT_EQ(dcb.devs["eth2"].maxrate_kbps[3], 53'000'000u);
}

TEST(DcbRateUnits, ArgumentsAndJsonInBothConventions) {
  EXPECT_EQ(DcbRateArg(25'000'000, DcbRateUnits::kBytesAsKbit), "200000000bit");
  EXPECT_EQ(DcbRateArg(25'000'000, DcbRateUnits::kConverted), "25000000000bit");
  EXPECT_EQ(DcbRateArg(0, DcbRateUnits::kBytesAsKbit), "0bit");
  EXPECT_EQ(DcbJsonRateToKbps(25'000'000, DcbRateUnits::kBytesAsKbit), 25'000'000u);
  EXPECT_EQ(DcbJsonRateToKbps(3'125'000'000, DcbRateUnits::kConverted), 25'000'000u);
  FakeProcessRunner runner;
  runner.OnOutput({"dcb", "-V"}, "dcb utility, iproute2-6.18.0\n");
  EXPECT_EQ(*ReadDcbRateUnits(runner, "t"), DcbRateUnits::kConverted);
  FakeProcessRunner old;
  old.OnOutput({"dcb", "-V"}, "dcb utility, iproute2-6.1.0\n");
  EXPECT_EQ(*ReadDcbRateUnits(old, "t"), DcbRateUnits::kBytesAsKbit);
  FakeProcessRunner odd;
  odd.OnOutput({"dcb", "-V"}, "dcb utility, iproute2-ss200127\n");
  EXPECT_TRUE(ErrorContains(ReadDcbRateUnits(odd, "t").status(), "cannot read iproute2's version"));
}

TEST(RoceTcRate, ApplyVerifyRevertVerifyWithExactArgvOnDcb61) {
  FakeDcb dcb;
  auto f = MakeOk("roce_tc_rate", kParams, dcb.host());
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(dcb.calls,
            (std::vector<Argv>{{"dcb", "-V"}, {"dcb", "-j", "maxrate", "show", "dev", "eth2"}}));
  EXPECT_EQ(f->ResolvedTarget(), "eth2 (mlx5_1/2 RoCE) tc 3");
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(dcb.devs["eth2"].maxrate_kbps[3], 25'000'000u) << "25 Gbit/s reached the kernel";
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(dcb.devs["eth2"].maxrate_kbps[3], 0u);
  EXPECT_FALSE(f->Verify().ok());
  std::vector<Argv> want = {
      {"dcb", "maxrate", "set", "dev", "eth2", "tc-maxrate", "3:200000000bit"}, kNoCaps};
  EXPECT_EQ(dcb.Mutations(), want);
}

TEST(RoceTcRate, FromIproute2618TheArgumentIsTheRateItself) {
  FakeDcb dcb;
  dcb.version = "6.18.0";
  dcb.devs["eth2"].maxrate_kbps[5] = 10'000'000;
  auto f = MakeOk("roce_tc_rate", kParams, dcb.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Verify().ok());
  EXPECT_EQ(dcb.devs["eth2"].maxrate_kbps[3], 25'000'000u);
  ASSERT_TRUE(Reverted(*f));
  std::vector<Argv> want = {
      {"dcb", "maxrate", "set", "dev", "eth2", "tc-maxrate", "3:25000000000bit"},
      {"dcb", "maxrate", "set", "dev", "eth2", "tc-maxrate", "0:0bit", "1:0bit", "2:0bit", "3:0bit",
       "4:0bit", "5:10000000000bit", "6:0bit", "7:0bit"}};
  EXPECT_EQ(dcb.Mutations(), want);
  EXPECT_EQ(dcb.devs["eth2"].maxrate_kbps[5], 10'000'000u) << "tc 5's own cap is back";
}

TEST(RoceTcRate, VerifyTakesTheDevicesStepButNotACapAboveTheTarget) {
  FakeDcb dcb;
  // mlx5 keeps 1.25 Gbit/s as 1.2 Gbit/s (100 Mbit/s steps): still a cap at most the target.
  auto f =
      MakeOk("roce_tc_rate", {{"interface", "eth2"}, {"tc", 3}, {"rate", "1250mbit"}}, dcb.host());
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(dcb.devs["eth2"].maxrate_kbps[3], 1'200'000u);
  // Below one step mlx5 caps at 100 Mbit/s, above the 50 Mbit/s asked: not in force.
  FakeDcb small;
  auto g =
      MakeOk("roce_tc_rate", {{"interface", "eth2"}, {"tc", 3}, {"rate", "50mbit"}}, small.host());
  ASSERT_TRUE(CapturedAndApplied(*g));
  EXPECT_TRUE(
      ErrorContains(g->Verify(), "tc 3 reads back 100mbit, expected a cap of at most 50mbit"));
}

TEST(RoceTcRate, RefusesANetdevWithoutDcbNamingItAndDcbsError) {
  FakeDcb dcb;
  auto veth =
      MakeOk("roce_tc_rate", {{"interface", "veth0"}, {"tc", 3}, {"rate", "25gbit"}}, dcb.host());
  EXPECT_TRUE(ErrorContains(veth->Capture(), StatusCode::kUnsupported,
                            "veth0 has no DCB support in its driver (`dcb -j maxrate show dev "
                            "veth0`: Attribute read: Operation not supported)"));
  dcb.devs["eth2"].has_maxrate = false;
  auto eth2 = MakeOk("roce_tc_rate", kParams, dcb.host());
  EXPECT_TRUE(ErrorContains(eth2->Capture(), StatusCode::kUnsupported,
                            "the driver of eth2 has no DCB maxrate"));
  auto gone =
      MakeOk("roce_tc_rate", {{"interface", "eth9"}, {"tc", 3}, {"rate", "25gbit"}}, dcb.host());
  EXPECT_TRUE(ErrorContains(gone->Capture(), StatusCode::kNotFound, "no interface \"eth9\""));
  EXPECT_TRUE(dcb.Mutations().empty());
}

TEST(RoceTcRate, RefusesATcAlreadyCappedAtOrBelowTheTarget) {
  FakeDcb dcb;
  dcb.devs["eth2"].maxrate_kbps[3] = 20'000'000;
  auto f = MakeOk("roce_tc_rate", kParams, dcb.host());
  EXPECT_TRUE(ErrorContains(f->Capture(), StatusCode::kFailedPrecondition,
                            "tc 3 is already capped at 20gbit, at or below 25gbit"));
  EXPECT_TRUE(dcb.Mutations().empty());
}

TEST(RoceTcRate, RevertTwiceAndRevertWithoutApplyTouchNothing) {
  FakeDcb dcb;
  auto f = MakeOk("roce_tc_rate", kParams, dcb.host());
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, dcb));
  EXPECT_EQ(dcb.Mutations().size(), 2u);  // one set, one restore
}

TEST(RoceTcRate, RevertAfterFailedApplyLeavesTheFoundState) {
  FakeDcb dcb;
  auto f = MakeOk("roce_tc_rate", kParams, dcb.host());
  ASSERT_TRUE(f->Capture().ok());
  dcb.FailNext({"dcb", "maxrate", "set"}, "Attribute write: Operation not permitted\n");
  ASSERT_TRUE(ErrorContains(f->Apply(), "Operation not permitted"));
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(dcb.Mutations().size(), 1u);  // only the failed set
}

TEST(RoceTcRate, RestoredFromJournalRevertsWhatALostAgentApplied) {
  FakeDcb dcb;
  dcb.devs["eth2"].maxrate_kbps[6] = 40'000'000;
  Json record = JournalApplyAndDie("roce_tc_rate", kParams, dcb.host());
  EXPECT_EQ(record["saved"]["prior_kbps"], Json::array({0, 0, 0, 0, 0, 0, 40'000'000, 0}));
  ASSERT_EQ(dcb.devs["eth2"].maxrate_kbps[3], 25'000'000u);
  auto restored = Restore(record, dcb.host());
  EXPECT_EQ(restored->Saved(), record["saved"]);
  EXPECT_EQ(restored->ResolvedTarget(), "eth2 (mlx5_1/2 RoCE) tc 3");
  ASSERT_TRUE(Reverted(*restored));
  EXPECT_EQ(dcb.devs["eth2"].maxrate_kbps,
            (std::array<uint64_t, 8>{0, 0, 0, 0, 0, 0, 40'000'000, 0}));
  // The restarted agent asked dcb's version again before it wrote.
  EXPECT_EQ(dcb.calls[dcb.calls.size() - 4], (Argv{"dcb", "-V"}));
}

TEST(RoceTcRate, ParamsValidateAndNameTheKey) {
  FakeDcb dcb;
  EXPECT_TRUE(RefusedNaming("roce_tc_rate", {{"interface", "eth2"}, {"rate", "25gbit"}}, dcb.host(),
                            "tc", "dcb ets show dev IF prio-tc"));
  EXPECT_TRUE(RefusedNaming("roce_tc_rate", {{"interface", "eth2"}, {"tc", 8}, {"rate", "25gbit"}},
                            dcb.host(), "tc"));
  EXPECT_TRUE(RefusedNaming("roce_tc_rate", {{"interface", "eth2"}, {"tc", 3}, {"rate", "25gbps"}},
                            dcb.host(), "rate"));
  EXPECT_TRUE(RefusedNaming("roce_tc_rate", {{"interface", "eth2"}, {"tc", 3}, {"rate", "8500bit"}},
                            dcb.host(), "rate", "whole kbit/s"));
  EXPECT_TRUE(
      RefusedNaming("roce_tc_rate", {{"tc", 3}, {"rate", "25gbit"}}, dcb.host(), "interface"));
  EXPECT_TRUE(
      ErrorContains(ParamsError("roce_tc_rate",
                                {{"interface", "eth2"}, {"tc", 3}, {"rat", "25gbit"}}, dcb.host()),
                    "params.rate"));
  EXPECT_TRUE(dcb.calls.empty());
}

TEST(RoceTcRate, MechanismNamesBothDcbConventionsUntilCaptureKnowsWhich) {
  FakeDcb dcb;
  auto f = MakeOk("roce_tc_rate", kParams, dcb.host());
  auto before = f->Mechanism();
  ASSERT_EQ(before.size(), 4u);
  EXPECT_EQ(before[1],
            "apply: dcb maxrate set dev eth2 tc-maxrate 3:25000000000bit (iproute2 >= 6.18)");
  EXPECT_EQ(before[2].rfind("apply: dcb maxrate set dev eth2 tc-maxrate 3:200000000bit (iproute2 "
                            "< 6.18",
                            0),
            0u)
      << before[2];
  ASSERT_TRUE(f->Capture().ok());
  auto after = f->Mechanism();
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[1], "apply: dcb maxrate set dev eth2 tc-maxrate 3:200000000bit");
  EXPECT_EQ(after[2], "revert: " + JoinArgv(kNoCaps));
  EXPECT_TRUE(dcb.Mutations().empty());
}

TEST(RoceTcRate, ProbeNeedsDcbAndTheNetdev) {
  FakeDcb dcb;
  EXPECT_TRUE(FindInjector("roce_tc_rate")->probe({{"interface", "eth2"}}, dcb.host()).ok());
  EXPECT_TRUE(
      ErrorContains(FindInjector("roce_tc_rate")->probe({{"interface", "eth9"}}, dcb.host()),
                    StatusCode::kNotFound, "eth9"));
  NoDcb none;
  EXPECT_TRUE(ErrorContains(FindInjector("roce_tc_rate")->probe(Json::object(), Host{&none}),
                            StatusCode::kUnsupported, "roce_tc_rate needs dcb (iproute2)"));
  FakeProcessRunner failing;
  failing.On({"dcb"}, ProcessResult{1, "", ""});
  EXPECT_TRUE(ErrorContains(FindInjector("roce_tc_rate")->probe(Json::object(), Host{&failing}),
                            StatusCode::kUnsupported, "`dcb -V` exited 1"));
}

}  // namespace
}  // namespace fdrill

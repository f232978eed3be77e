// ib_port_disable and ib_port_flap against FakeIbFabric.
#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_ib.h"
#include "tests/injectors/injector_test_support.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;

const Argv kDisable = {"ibportstate", "-C", "mlx5_0", "-P", "1", "3", "1", "disable"};
const Argv kEnable = {"ibportstate", "-C", "mlx5_0", "-P", "1", "3", "1", "enable"};

TEST(IbPortDisable, ApplyVerifyRevertVerifyWithExactArgv) {
  FakeIbFabric fabric;
  auto f = MakeOk("ib_port_disable", {{"device", "mlx5_0"}, {"port", 1}}, fabric.host());
  EXPECT_EQ(f->Target(), "mlx5_0/1");
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["lid"], 3);  // read from sysfs (hex 0x3)
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(AppliedAndVerified(*f));
  EXPECT_EQ(fabric.sysfs.files[fabric.Dir("mlx5_0", 1) + "/phys_state"], "3: Disabled\n");
  EXPECT_FALSE(f->VerifyReverted().ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(fabric.sysfs.files[fabric.Dir("mlx5_0", 1) + "/state"], "4: ACTIVE\n");
  EXPECT_EQ(fabric.Mutations(), (std::vector<Argv>{kDisable, kEnable}));
  EXPECT_TRUE(fabric.sysfs.writes.empty());  // it observes sysfs, never writes it
}

TEST(IbPortDisable, VerifyRevertedWaitsForTheSubnetManager) {
  FakeIbFabric fabric;
  fabric.port().subnet_manager = false;
  auto f = MakeOk("ib_port_disable", {{"device", "mlx5_0"}}, fabric.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Revert().ok());
  Status s = f->VerifyReverted();
  ASSERT_TRUE(ErrorContains(s, "2: INIT"));
  EXPECT_TRUE(ErrorContains(s, "subnet manager"));
  ASSERT_TRUE(f->Revert().ok());  // a retry does not re-enable a port that is training
  EXPECT_EQ(fabric.Mutations().size(), 2u);
  fabric.port().state = 4;  // the SM sweeps
  fabric.Sync();
  EXPECT_TRUE(f->VerifyReverted().ok());
}

TEST(IbPortDisable, RevertAfterFailedApplyAndTwice) {
  FakeIbFabric fabric;
  auto f = MakeOk("ib_port_disable", {{"device", "mlx5_0"}, {"lid", "0x3"}}, fabric.host());
  ASSERT_TRUE(f->Capture().ok());
  fabric.FailNext({"ibportstate"}, "ibportstate: iberror: failed: smp set portinfo failed\n");
  ASSERT_TRUE(ErrorContains(f->Apply(), "smp set portinfo failed"));
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(fabric.Mutations().size(), 1u);  // only the failed disable
}

TEST(IbPortDisable, RefusesADisabledPortAMissingOneAndABadLid) {
  FakeIbFabric fabric;
  fabric.port().phys = 3;
  fabric.port().state = 1;
  fabric.Sync();
  auto f = MakeOk("ib_port_disable", {{"device", "mlx5_0"}}, fabric.host());
  EXPECT_EQ(f->Capture().code(), StatusCode::kFailedPrecondition);
  auto g = MakeOk("ib_port_disable", {{"device", "mlx5_1"}}, fabric.host());
  EXPECT_EQ(g->Capture().code(), StatusCode::kNotFound);

  FakeIbFabric unassigned;
  unassigned.sysfs.files[unassigned.Dir("mlx5_0", 1) + "/lid"] = "0x0\n";  // no SM has assigned one
  auto h = MakeOk("ib_port_disable", {{"device", "mlx5_0"}}, unassigned.host());
  EXPECT_TRUE(ErrorContains(h->Capture(), "params.lid"));

  FakeIbFabric wrong;
  auto w = MakeOk("ib_port_disable", {{"device", "mlx5_0"}, {"lid", 9}}, wrong.host());
  ASSERT_TRUE(w->Capture().ok());
  EXPECT_TRUE(ErrorContains(w->Apply(), "can't resolve destination port 9"));
}

TEST(IbPortDisable, ParamsNameTheKey) {
  FakeIbFabric fabric;
  auto expect_key = [&](const Json& params, const std::string& key) {
    EXPECT_TRUE(RefusedNaming("ib_port_disable", params, fabric.host(), key));
  };
  expect_key(Json::object(), "device");
  expect_key({{"device", "mlx5_0"}, {"port", 0}}, "port");
  expect_key({{"device", "mlx5_0"}, {"port", "1"}}, "port");
  expect_key({{"device", "mlx5_0"}, {"lid", "zz"}}, "lid");
  expect_key({{"device", "mlx5_0"}, {"lid", 0xC000}}, "lid");
  expect_key({{"device", "mlx5_0"}, {"prot", 1}}, "prot");
  EXPECT_TRUE(fabric.calls.empty());
}

TEST(IbPortDisable, RestoredFromJournalEnablesThePort) {
  FakeIbFabric fabric;
  Json record = JournalApplyAndDie("ib_port_disable", {{"device", "mlx5_0"}}, fabric.host());
  fabric.sysfs.files[fabric.Dir("mlx5_0", 1) + "/lid"] =
      "0xffff\n";  // what a disabled port may show
  ASSERT_TRUE(Reverted(*Restore(record, fabric.host())));
  EXPECT_EQ(fabric.Mutations().back(), kEnable);  // the journalled LID, not sysfs's
}

TEST(IbPortFlap, DisabledForDownThenEnabledWithExactArgv) {
  FakeIbFabric fabric;
  auto f = MakeOk("ib_port_flap", {{"device", "mlx5_0"}, {"down", "3s"}}, fabric.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  ASSERT_TRUE(f->Verify().ok());
  ASSERT_TRUE(f->Tick(milliseconds(2999)).ok());
  EXPECT_EQ(fabric.port().phys, 3);
  EXPECT_FALSE(f->Finished(milliseconds(2999)));
  ASSERT_TRUE(f->Tick(milliseconds(3000)).ok());
  EXPECT_EQ(fabric.port().phys, 5);
  ASSERT_TRUE(f->Verify().ok()) << f->Verify().ToString();  // up window: not Disabled
  EXPECT_TRUE(f->Finished(milliseconds(3000)));
  ASSERT_TRUE(f->Tick(milliseconds(3100)).ok());  // repeated ticks change nothing
  ASSERT_TRUE(Reverted(*f));
  EXPECT_EQ(fabric.Mutations(), (std::vector<Argv>{kDisable, kEnable}));
}

TEST(IbPortFlap, CountAndPeriodMakeRepeatedFlaps) {
  FakeIbFabric fabric;
  auto f =
      MakeOk("ib_port_flap", {{"device", "mlx5_0"}, {"down", "1s"}, {"count", 3}, {"period", "4s"}},
             fabric.host());
  ASSERT_TRUE(CapturedAndApplied(*f));
  for (int ms = 0; ms <= 13000; ms += 500) ASSERT_TRUE(f->Tick(milliseconds(ms)).ok());
  EXPECT_EQ(fabric.Mutations().size(), 6u);  // three disables, three enables
  EXPECT_TRUE(f->Finished(std::chrono::seconds(9)));
  EXPECT_EQ(fabric.port().phys, 5);
}

TEST(IbPortFlap, RevertMidFlapAfterFailedApplyAndTwice) {
  FakeIbFabric fabric;
  auto f = MakeOk("ib_port_flap", {{"device", "mlx5_0"}, {"down", "10s"}}, fabric.host());
  ASSERT_TRUE(RevertIsSafeUnappliedAndTwice(*f, fabric));
  EXPECT_EQ(fabric.Mutations().size(), 2u);

  FakeIbFabric failing;
  auto g = MakeOk("ib_port_flap", {{"device", "mlx5_0"}, {"down", "3s"}}, failing.host());
  ASSERT_TRUE(g->Capture().ok());
  failing.FailNext({"ibportstate"}, "ibportstate: iberror: failed: smp set portinfo failed\n");
  ASSERT_FALSE(g->Apply().ok());
  ASSERT_TRUE(Reverted(*g));
  EXPECT_EQ(failing.Mutations().size(), 1u);
}

TEST(IbPortFlap, ParamsNameTheKeyAndRestoreReverts) {
  FakeIbFabric fabric;
  EXPECT_TRUE(RefusedNaming("ib_port_flap",
                            {{"device", "mlx5_0"}, {"down", "3s"}, {"count", 2}, {"period", "2s"}},
                            fabric.host(), "period"));
  EXPECT_TRUE(RefusedNaming("ib_port_flap", {{"device", "mlx5_0"}}, fabric.host(), "down"));

  Json record =
      JournalApplyAndDie("ib_port_flap", {{"device", "mlx5_0"}, {"down", "30s"}}, fabric.host());
  ASSERT_TRUE(Reverted(*Restore(record, fabric.host())));
}

}  // namespace
}  // namespace fdrill

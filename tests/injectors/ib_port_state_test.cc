// ib_port_disable and ib_port_flap against FakeIbFabric.
#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_ib.h"

namespace fdrill {
namespace {

using Argv = std::vector<std::string>;
using std::chrono::milliseconds;

std::unique_ptr<Fault> Make(FakeIbFabric& fabric, const std::string& kind, const Json& params) {
  auto f = MakeFault(kind, params, fabric.host());
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(*f);
}

const Argv kDisable = {"ibportstate", "-C", "mlx5_0", "-P", "1", "3", "1", "disable"};
const Argv kEnable = {"ibportstate", "-C", "mlx5_0", "-P", "1", "3", "1", "enable"};

TEST(IbPortDisable, ApplyVerifyRevertVerifyWithExactArgv) {
  FakeIbFabric fabric;
  auto f = Make(fabric, "ib_port_disable", {{"device", "mlx5_0"}, {"port", 1}});
  EXPECT_EQ(f->Target(), "mlx5_0/1");
  ASSERT_TRUE(f->Capture().ok());
  EXPECT_EQ(f->Saved()["lid"], 3);  // read from sysfs (hex 0x3)
  EXPECT_FALSE(f->Verify().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok()) << f->Verify().ToString();
  EXPECT_EQ(fabric.sysfs.files[fabric.Dir("mlx5_0", 1) + "/phys_state"], "3: Disabled\n");
  EXPECT_FALSE(f->VerifyReverted().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok()) << f->VerifyReverted().ToString();
  EXPECT_EQ(fabric.sysfs.files[fabric.Dir("mlx5_0", 1) + "/state"], "4: ACTIVE\n");
  EXPECT_EQ(fabric.Mutations(), (std::vector<Argv>{kDisable, kEnable}));
  EXPECT_TRUE(fabric.sysfs.writes.empty());  // it observes sysfs, never writes it
}

TEST(IbPortDisable, VerifyRevertedWaitsForTheSubnetManager) {
  FakeIbFabric fabric;
  fabric.port().subnet_manager = false;
  auto f = Make(fabric, "ib_port_disable", {{"device", "mlx5_0"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  Status s = f->VerifyReverted();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("2: INIT"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("subnet manager"), std::string::npos) << s.message();
  ASSERT_TRUE(f->Revert().ok());  // a retry does not re-enable a port that is training
  EXPECT_EQ(fabric.Mutations().size(), 2u);
  fabric.port().state = 4;  // the SM sweeps
  fabric.Sync();
  EXPECT_TRUE(f->VerifyReverted().ok());
}

TEST(IbPortDisable, RevertAfterFailedApplyAndTwice) {
  FakeIbFabric fabric;
  auto f = Make(fabric, "ib_port_disable", {{"device", "mlx5_0"}, {"lid", "0x3"}});
  ASSERT_TRUE(f->Capture().ok());
  fabric.FailNext({"ibportstate"}, "ibportstate: iberror: failed: smp set portinfo failed\n");
  Status s = f->Apply();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("smp set portinfo failed"), std::string::npos) << s.message();
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(fabric.Mutations().size(), 1u);  // only the failed disable
}

TEST(IbPortDisable, RefusesADisabledPortAMissingOneAndABadLid) {
  FakeIbFabric fabric;
  fabric.port().phys = 3;
  fabric.port().state = 1;
  fabric.Sync();
  auto f = Make(fabric, "ib_port_disable", {{"device", "mlx5_0"}});
  EXPECT_EQ(f->Capture().code(), StatusCode::kFailedPrecondition);
  auto g = Make(fabric, "ib_port_disable", {{"device", "mlx5_1"}});
  EXPECT_EQ(g->Capture().code(), StatusCode::kNotFound);

  FakeIbFabric unassigned;
  unassigned.sysfs.files[unassigned.Dir("mlx5_0", 1) + "/lid"] = "0x0\n";  // no SM has assigned one
  auto h = Make(unassigned, "ib_port_disable", {{"device", "mlx5_0"}});
  Status s = h->Capture();
  EXPECT_NE(s.message().find("params.lid"), std::string::npos) << s.message();

  FakeIbFabric wrong;
  auto w = Make(wrong, "ib_port_disable", {{"device", "mlx5_0"}, {"lid", 9}});
  ASSERT_TRUE(w->Capture().ok());
  Status a = w->Apply();
  EXPECT_NE(a.message().find("can't resolve destination port 9"), std::string::npos) << a.message();
}

TEST(IbPortDisable, ParamsNameTheKey) {
  FakeIbFabric fabric;
  auto expect_key = [&](const Json& params, const std::string& key) {
    auto f = MakeFault("ib_port_disable", params, fabric.host());
    ASSERT_FALSE(f.ok()) << params.dump();
    EXPECT_EQ(f.status().message().rfind("params." + key + ":", 0), 0u) << f.status().message();
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
  Json params = {{"device", "mlx5_0"}};
  auto first = Make(fabric, "ib_port_disable", params);
  ASSERT_TRUE(first->Capture().ok());
  Json record = {{"kind", "ib_port_disable"}, {"params", params}, {"saved", first->Saved()}};
  ASSERT_TRUE(first->Apply().ok());
  first.reset();
  fabric.sysfs.files[fabric.Dir("mlx5_0", 1) + "/lid"] =
      "0xffff\n";  // what a disabled port may show
  auto again = RestoreFault(record, fabric.host());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE((*again)->Revert().ok());
  ASSERT_TRUE((*again)->VerifyReverted().ok());
  EXPECT_EQ(fabric.Mutations().back(), kEnable);  // the journalled LID, not sysfs's
}

TEST(IbPortFlap, DisabledForDownThenEnabledWithExactArgv) {
  FakeIbFabric fabric;
  auto f = Make(fabric, "ib_port_flap", {{"device", "mlx5_0"}, {"down", "3s"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Verify().ok());
  ASSERT_TRUE(f->Tick(milliseconds(2999)).ok());
  EXPECT_EQ(fabric.port().phys, 3);
  EXPECT_FALSE(f->Finished(milliseconds(2999)));
  ASSERT_TRUE(f->Tick(milliseconds(3000)).ok());
  EXPECT_EQ(fabric.port().phys, 5);
  ASSERT_TRUE(f->Verify().ok()) << f->Verify().ToString();  // up window: not Disabled
  EXPECT_TRUE(f->Finished(milliseconds(3000)));
  ASSERT_TRUE(f->Tick(milliseconds(3100)).ok());  // repeated ticks change nothing
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(fabric.Mutations(), (std::vector<Argv>{kDisable, kEnable}));
}

TEST(IbPortFlap, CountAndPeriodMakeRepeatedFlaps) {
  FakeIbFabric fabric;
  auto f = Make(fabric, "ib_port_flap",
                {{"device", "mlx5_0"}, {"down", "1s"}, {"count", 3}, {"period", "4s"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  for (int ms = 0; ms <= 13000; ms += 500) ASSERT_TRUE(f->Tick(milliseconds(ms)).ok());
  EXPECT_EQ(fabric.Mutations().size(), 6u);  // three disables, three enables
  EXPECT_TRUE(f->Finished(std::chrono::seconds(9)));
  EXPECT_EQ(fabric.port().phys, 5);
}

TEST(IbPortFlap, RevertMidFlapAfterFailedApplyAndTwice) {
  FakeIbFabric fabric;
  auto f = Make(fabric, "ib_port_flap", {{"device", "mlx5_0"}, {"down", "10s"}});
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(fabric.Mutations().size(), 2u);

  FakeIbFabric failing;
  auto g = Make(failing, "ib_port_flap", {{"device", "mlx5_0"}, {"down", "3s"}});
  ASSERT_TRUE(g->Capture().ok());
  failing.FailNext({"ibportstate"}, "ibportstate: iberror: failed: smp set portinfo failed\n");
  ASSERT_FALSE(g->Apply().ok());
  ASSERT_TRUE(g->Revert().ok());
  ASSERT_TRUE(g->VerifyReverted().ok());
  EXPECT_EQ(failing.Mutations().size(), 1u);
}

TEST(IbPortFlap, ParamsNameTheKeyAndRestoreReverts) {
  FakeIbFabric fabric;
  auto bad = MakeFault("ib_port_flap",
                       {{"device", "mlx5_0"}, {"down", "3s"}, {"count", 2}, {"period", "2s"}},
                       fabric.host());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("params.period:", 0), 0u) << bad.status().message();
  auto no_down = MakeFault("ib_port_flap", {{"device", "mlx5_0"}}, fabric.host());
  ASSERT_FALSE(no_down.ok());
  EXPECT_EQ(no_down.status().message().rfind("params.down:", 0), 0u);

  Json params = {{"device", "mlx5_0"}, {"down", "30s"}};
  auto first = Make(fabric, "ib_port_flap", params);
  ASSERT_TRUE(first->Capture().ok());
  Json record = {{"kind", "ib_port_flap"}, {"params", params}, {"saved", first->Saved()}};
  ASSERT_TRUE(first->Apply().ok());
  first.reset();
  auto again = RestoreFault(record, fabric.host());
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE((*again)->Revert().ok());
  ASSERT_TRUE((*again)->VerifyReverted().ok());
}

}  // namespace
}  // namespace fdrill

// `fdrill fabric up` gives the emulated fabric its own CA: certs for the
// controller and every node, agents started with --tls-* (or --insecure when
// asked), and fabric.json recording where the pki lives so `fdrill run`
// dials with TLS by default. Runs FabricUp over the recording fakes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/tls/certs.h"
#include "common/tls/tls_config.h"
#include "fabric/fabric_up.h"
#include "tests/fabric/fabric_up_fixture.h"

namespace fdrill {
namespace {

using Argv = std::vector<std::string>;
using ::testing::Contains;

class FabricPkiTest : public FabricUpFixture {
 protected:
  FabricPkiTest() : FabricUpFixture(3) {}
  const std::string pki_ = "/run/fdrill/fabric/pki";
};

TEST_F(FabricPkiTest, UpMakesACaAndACertPerNodeAndTheController) {
  auto state = FabricUp(options_, Host());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->pki_dir, pki_);
  EXPECT_THAT(runner_.calls(), Contains(Argv{"install", "-d", "-m", "0700", pki_}));

  const std::string& ca = fs_.files[pki_ + "/ca.pem"];
  // Each with its role (common/tls/certs.h): the agents' are server-only.
  for (std::string name : {"controller", "observer", "n0", "n1", "n2", "sw"}) {
    ASSERT_TRUE(fs_.files.count(pki_ + "/" + name + ".key")) << name;
    const std::string& cert = fs_.files[pki_ + "/" + name + ".pem"];
    EXPECT_TRUE(VerifyCert(ca, cert).ok()) << name;
    const std::string role =
        name == "controller" || name == "observer" ? name : std::string("node");
    EXPECT_EQ(*CertSubject(cert), "CN=" + name + ",OU=" + role);
  }

  // The pki exists before any agent starts, and each agent gets its own: the
  // three nodes', then the switch's.
  ASSERT_EQ(node_.spawned.size(), 4u);
  const Argv& argv = node_.spawned[2].argv;
  Argv tail(argv.end() - 6, argv.end());
  EXPECT_EQ(tail, (Argv{"--tls-ca", pki_ + "/ca.pem", "--tls-cert", pki_ + "/n2.pem", "--tls-key",
                        pki_ + "/n2.key"}));

  // fabric.json records it, so `fdrill run` picks controller.pem by default.
  auto saved = LoadFabricState(fs_, "/run/fdrill/fabric");
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_EQ(saved->pki_dir, pki_);
  auto tls = ControllerTls("", false, saved->pki_dir);
  ASSERT_TRUE(tls.ok() && tls->has_value());
  EXPECT_EQ((*tls)->cert_file, pki_ + "/controller.pem");
}

TEST_F(FabricPkiTest, EachUpMakesANewCa) {
  auto first = FabricUp(options_, Host());
  ASSERT_TRUE(first.ok());
  std::string ca = fs_.files[pki_ + "/ca.pem"];
  FakeSysFs fresh;
  fresh.files["/proc/self/mountinfo"] = fs_.files["/proc/self/mountinfo"];
  FakeProcessRunner runner;
  FakeNodeSystem node(&clock_);
  auto second = FabricUp(options_, FabricHost{&runner, &fresh, &node, &clock_});
  ASSERT_TRUE(second.ok());
  EXPECT_NE(fresh.files[pki_ + "/ca.pem"], ca);
  EXPECT_FALSE(VerifyCert(ca, fresh.files[pki_ + "/n0.pem"]).ok());
}

TEST_F(FabricPkiTest, InsecureFabricSaysSoOnEveryAgentsCommandLine) {
  options_.insecure = true;
  auto state = FabricUp(options_, Host());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->pki_dir, "");
  for (const auto& spec : node_.spawned) EXPECT_EQ(spec.argv.back(), "--insecure");
  EXPECT_FALSE(fs_.Exists(pki_));
  // And the controller will not dial it in plaintext unless told to.
  EXPECT_FALSE(ControllerTls("", false, state->pki_dir).ok());
}

TEST(FabricPkiJson, OldFabricJsonWithoutPkiDirLoads) {
  auto planned = PlanFabric(FabricLayout::Default(), 1, "/bin/agent");
  ASSERT_TRUE(planned.ok());
  planned->pki_dir = "/run/fdrill/fabric/pki";
  auto round = FabricStateFromJson(FabricStateToJson(*planned));
  ASSERT_TRUE(round.ok());
  EXPECT_EQ(round->pki_dir, "/run/fdrill/fabric/pki");
  auto j = nlohmann::json::parse(FabricStateToJson(*planned));
  j.erase("pki_dir");
  auto old = FabricStateFromJson(j.dump());
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->pki_dir, "");
}

}  // namespace
}  // namespace fdrill

// The registry's entries beyond link_rate/link_flap, and every capability probe.
#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_host.h"
#include "tests/fakes/fake_ib.h"
#include "tests/fakes/fake_iptables.h"
#include "tests/fakes/fake_net.h"

namespace fdrill {
namespace {

// A machine with none of the tools: every exec fails as RealProcessRunner's does.
class NoTools final : public ProcessRunner {
 public:
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration) override {
    return ProgramMissing(argv[0]);
  }
};

TEST(RegistryProbe, ListsEveryKindWithAProbeAndParamsHelp) {
  for (const char* kind : {"link_rate", "link_flap", "link_loss", "link_down", "link_partition",
                           "ib_port_flap", "ib_port_disable", "ib_port_width", "ib_port_speed"}) {
    const InjectorInfo* info = FindInjector(kind);
    ASSERT_NE(info, nullptr) << kind;
    EXPECT_NE(info->probe, nullptr) << kind;
    EXPECT_NE(std::string(info->params), "") << kind;
  }
  EXPECT_NE(std::string(FindInjector("link_loss")->params).find("tso"),
            std::string::npos);  // the GSO caveat
}

TEST(RegistryProbe, NetworkProbesNameTheMissingTool) {
  NoTools none;
  FakeSysFs sysfs;
  Host host{&none, &sysfs};
  const std::map<std::string, std::string> tool = {{"link_rate", "tc"},
                                                   {"link_flap", "ip"},
                                                   {"link_down", "ip"},
                                                   {"link_loss", "nft"},
                                                   {"link_partition", "iptables"}};
  for (const auto& [kind, needs] : tool) {
    Status s = FindInjector(kind)->probe(Json::object(), host);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << kind;
    EXPECT_NE(s.message().find("needs " + needs), std::string::npos) << s.message();
  }
  // link_loss's ingress is an iptables chain; its egress (the default) is nftables'.
  Status ingress = FindInjector("link_loss")->probe({{"direction", "ingress"}}, host);
  EXPECT_NE(ingress.message().find("needs iptables"), std::string::npos) << ingress.message();
}

TEST(RegistryProbe, NetworkProbesCheckTheInterfaceWhenGiven) {
  FakeNetKernel kernel;
  FakeIptables ipt(&kernel);
  Host host{&ipt, nullptr};
  const Json ingress = {{"interface", "fab0"}, {"direction", "ingress"}};
  EXPECT_TRUE(FindInjector("link_loss")->probe(ingress, host).ok());
  EXPECT_TRUE(FindInjector("link_partition")->probe(Json::object(), host).ok());
  Status s =
      FindInjector("link_loss")->probe({{"interface", "fab9"}, {"direction", "ingress"}}, host);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  FakeProcessRunner tools;
  tools.OnOutput({"tc", "-V"}, "tc utility, iproute2-6.1.0\n");
  tools.OnOutput({"ip", "-V"}, "ip utility, iproute2-6.1.0\n");
  EXPECT_TRUE(FindInjector("link_rate")->probe(Json::object(), Host{&tools, nullptr}).ok());
  EXPECT_TRUE(FindInjector("link_down")->probe(Json::object(), Host{&tools, nullptr}).ok());
  EXPECT_TRUE(ipt.Mutations().empty());
}

TEST(RegistryProbe, IbProbeIsSharedByTheFourKinds) {
  FakeIbFabric fabric;
  for (const char* kind : {"ib_port_flap", "ib_port_disable", "ib_port_width", "ib_port_speed"}) {
    EXPECT_TRUE(FindInjector(kind)->probe({{"device", "mlx5_0"}, {"port", 1}}, fabric.host()).ok())
        << kind;
  }
}

}  // namespace
}  // namespace fdrill

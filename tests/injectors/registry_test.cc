#include <set>

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "tests/fakes/fake_net.h"

namespace fdrill {
namespace {

TEST(Registry, ListsEachInjectorOnceWithHelp) {
  std::set<std::string> names;
  for (const auto& i : Injectors()) {
    EXPECT_TRUE(names.insert(i.name).second) << i.name;
    EXPECT_NE(std::string(i.help), "");
    EXPECT_NE(i.make, nullptr);
  }
  EXPECT_TRUE(names.count("link_rate"));
  EXPECT_TRUE(names.count("link_flap"));
  EXPECT_EQ(FindInjector("nope"), nullptr);
}

TEST(Registry, UnknownKindSuggestsTheNearestName) {
  FakeNetKernel k;
  auto f = MakeFault("link_rat", Json::object(), Host{&k, nullptr});
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("did you mean \"link_rate\""), std::string::npos)
      << f.status().message();
}

TEST(Registry, MechanismNamesTheExactArgv) {
  FakeNetKernel k;
  auto f = MakeFault("link_rate", {{"interface", "fab0"}, {"rate", "100mbit"}}, Host{&k, nullptr});
  ASSERT_TRUE(f.ok());
  auto lines = (*f)->Mechanism();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("tc qdisc replace dev fab0 root handle fd1: tbf rate 100000000bit"),
            std::string::npos)
      << lines[0];
  // Before Capture it cannot know whether the port is a modelled switch port.
  EXPECT_EQ(lines[2].rfind("note: where the root is a tbf H: over a fifo", 0), 0u) << lines[2];
  EXPECT_TRUE(k.calls.empty());
}

// What the scenario code asks of a row (link_down, on_switch, radius,
// node_kind) agrees with the rest of it: what takes a whole switch has the
// switch scope and nothing else has; a switch-only kind's twin on nodes
// exists and acts on nodes; the far end of a link is an HCA port's.
TEST(Registry, TraitsAgreeWithTheScope) {
  for (const auto& i : Injectors()) {
    EXPECT_EQ(i.scope == Scope::kSwitch, i.on_switch == OnSwitch::kWhole) << i.name;
    if (i.radius == Radius::kFarHca) {
      EXPECT_EQ(i.scope, Scope::kIbPort) << i.name;
    }
    if (i.node_kind == nullptr) continue;
    EXPECT_EQ(i.on_switch, OnSwitch::kPortOnly) << i.name;
    const InjectorInfo* twin = FindInjector(i.node_kind);
    ASSERT_NE(twin, nullptr) << i.name << ": " << i.node_kind;
    EXPECT_NE(twin->on_switch, OnSwitch::kPortOnly) << i.name;
  }
  EXPECT_EQ(FindInjector("link_flap")->link_down, LinkDown::kFlap);
  EXPECT_EQ(FindInjector("link_down")->link_down, LinkDown::kWindow);
  EXPECT_EQ(FindInjector("link_rate")->link_down, LinkDown::kNo);
}

}  // namespace
}  // namespace fdrill

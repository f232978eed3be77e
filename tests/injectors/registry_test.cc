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
  EXPECT_EQ(FindInjector("link_rate")->make, &MakeLinkRate);
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

}  // namespace
}  // namespace fdrill

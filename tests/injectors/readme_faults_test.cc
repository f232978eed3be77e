// README.md's table of fault kinds against the registry (injectors/
// registry.cc): the same kinds, each once, with the same scope and the same
// traffic reached. The README cannot drift from the table the code runs. (Its mechanism column says
// more than the registry's one-line help, so the words are not compared.)
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "injectors/injector.h"

namespace fdrill {
namespace {

constexpr char kHeader[] = "| kind | scope | reaches |";

struct Row {
  std::string scope;
  std::string reaches;
};

// kind -> row, from each row of the table under kHeader: a row names one
// or more kinds in backticks in its first cell, their scope in the second,
// the traffic they reach in the third.
std::map<std::string, Row> ReadmeFaultTable(std::string* error) {
  std::ifstream in(std::string(FDRILL_SOURCE_DIR) + "/README.md");
  if (!in) {
    *error = "cannot open README.md";
    return {};
  }
  std::map<std::string, Row> out;
  std::string line;
  while (std::getline(in, line) && line.rfind(kHeader, 0) != 0) {
  }
  if (!in) {
    *error = std::string("README.md has no table starting \"") + kHeader + "\"";
    return {};
  }
  std::getline(in, line);  // | --- | --- | ...
  const std::regex kind_re("`([a-z0-9_]+)`");
  while (std::getline(in, line) && line.rfind("| `", 0) == 0) {
    const size_t first = line.find(" | ");
    const size_t second = line.find(" | ", first + 3);
    const size_t third =
        second == std::string::npos ? std::string::npos : line.find(" | ", second + 3);
    if (first == std::string::npos || second == std::string::npos || third == std::string::npos) {
      *error += "short row: " + line + "\n";
      continue;
    }
    const std::string kinds = line.substr(2, first - 2);
    const std::string scope = line.substr(first + 3, second - first - 3);
    const std::string reaches = line.substr(second + 3, third - second - 3);
    for (std::sregex_iterator m(kinds.begin(), kinds.end(), kind_re), end; m != end; ++m) {
      if (!out.emplace((*m)[1].str(), Row{scope, reaches}).second)
        *error += "README lists " + (*m)[1].str() + " twice\n";
    }
  }
  return out;
}

TEST(ReadmeFaultTable, ListsEveryRegisteredKindOnceWithItsScopeAndReach) {
  std::string error;
  const auto readme = ReadmeFaultTable(&error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_FALSE(readme.empty());
  for (const auto& info : Injectors()) {
    auto it = readme.find(info.name);
    if (it == readme.end()) {
      ADD_FAILURE() << info.name
                    << " is in injectors/registry.cc but not in README.md's fault table";
      continue;
    }
    EXPECT_EQ(it->second.scope, ScopeName(info.scope))
        << info.name << ": README.md's scope differs from the registry's";
    EXPECT_EQ(it->second.reaches, ReachText(info.reach))
        << info.name << ": README.md's \"reaches\" differs from the registry's";
  }
  for (const auto& [kind, row] : readme) {
    EXPECT_NE(FindInjector(kind), nullptr)
        << kind << " is in README.md's fault table but not in the registry";
  }
}

// What RDMA bypasses: no tc or netfilter kind claims to reach verbs
// traffic, and a kind for each RDMA transport exists.
TEST(Registry, EveryKindReachesSomethingAndOnlyPortKindsReachRdma) {
  bool roce = false, ib = false;
  for (const auto& info : Injectors()) {
    EXPECT_NE(info.reach, 0u) << info.name;
    roce |= (info.reach & kReachRoce) != 0 && info.scope == Scope::kInterface;
    ib |= (info.reach & kReachIbRdma) != 0 && info.scope == Scope::kIbPort;
  }
  EXPECT_TRUE(roce);
  EXPECT_TRUE(ib);
  for (const char* kernel_only : {"link_rate", "link_loss", "link_partition", "link_delay"})
    EXPECT_EQ(FindInjector(kernel_only)->reach, unsigned{kReachKernelIp}) << kernel_only;
  EXPECT_EQ(ReachText(kReachKernelIp | kReachRoce), "kernel TCP/IP (incl. IPoIB), RoCE RDMA");
}

TEST(Registry, EveryKindHasAScopeName) {
  for (const auto& info : Injectors())
    EXPECT_NE(std::string(ScopeName(info.scope)), "") << info.name;
  EXPECT_STREQ(ScopeName(Scope::kIbPort), "ib_port");
  EXPECT_EQ(FindInjector("link_partition")->scope, Scope::kInterface);
  EXPECT_EQ(FindInjector("nccl_env")->scope, Scope::kNccl);
}

}  // namespace
}  // namespace fdrill

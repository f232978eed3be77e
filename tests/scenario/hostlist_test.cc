#include "harness/scenario/hostlist.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

#include "harness/scenario/selector.h"

namespace fdrill {
namespace {

using Names = std::vector<std::string>;

Names Expand(const std::string& e) {
  auto r = ExpandHostlist(e);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : Names{};
}

std::string ErrorOf(const std::string& e) {
  auto r = ExpandHostlist(e);
  EXPECT_FALSE(r.ok()) << e;
  return r.ok() ? "" : r.status().message();
}

TEST(Hostlist, ExpandsAsSlurmDoes) {
  EXPECT_EQ(Expand("gpu[01-04]"), (Names{"gpu01", "gpu02", "gpu03", "gpu04"}));
  EXPECT_EQ(Expand("gpu[01-03,07]"), (Names{"gpu01", "gpu02", "gpu03", "gpu07"}));
  EXPECT_EQ(Expand("rack[1-2]-gpu[1-2]"),
            (Names{"rack1-gpu1", "rack1-gpu2", "rack2-gpu1", "rack2-gpu2"}));
  EXPECT_EQ(Expand("n0,n2,gpu[8-10]"), (Names{"n0", "n2", "gpu8", "gpu9", "gpu10"}));
  EXPECT_EQ(Expand("node[098-101]"), (Names{"node098", "node099", "node100", "node101"}));
  EXPECT_EQ(Expand("n1"), (Names{"n1"}));
  EXPECT_EQ(Expand("gpu[1-16]").size(), 16u);
}

TEST(Hostlist, RefusesWithThePlace) {
  EXPECT_EQ(ErrorOf("gpu[3-1]"), "gpu[3-1]: range 3-1 runs backwards (character 5)");
  EXPECT_EQ(ErrorOf("gpu[1-4"), "gpu[1-4: \"[\" is never closed (character 4)");
  EXPECT_EQ(ErrorOf("gpu1-4]"), "gpu1-4]: \"]\" without its \"[\" (character 7)");
  EXPECT_EQ(ErrorOf("gpu[a-b]"),
            "gpu[a-b]: \"a-b\" is not a number or a range like 01-16 (character 5)");
  EXPECT_EQ(ErrorOf("n1,,n2"), "n1,,n2: an empty host name (character 4)");
  EXPECT_EQ(ErrorOf("n1 n2"), "n1 n2: \" \" cannot be part of a host name (character 3)");
  EXPECT_EQ(ErrorOf("n[1-2],n2"), "n[1-2],n2: names n2 twice");
  EXPECT_NE(ErrorOf("gpu[0-999999]").find("more than 100000 hosts"), std::string::npos);
  EXPECT_NE(ErrorOf("a[0-999]b[0-999]").find("more than 100000 hosts"), std::string::npos);
}

TEST(Selector, SelectsInInventoryOrderAndNamesWhatExists) {
  const Names inv = {"n0", "n1", "n2", "n3"};
  auto s = SelectNodes({"n3", "n[0-1]"}, inv);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (Names{"n0", "n1", "n3"}));
  auto bad = SelectNodes({"n[3-4]"}, inv);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "node \"n4\" does not exist; this drill's fabric has n0, n1, n2, n3");
  EXPECT_FALSE(SelectNodes({"n1", "n1"}, inv).ok());
}

TEST(Selector, RandomPickIsSeededAndStable) {
  Names inv;
  for (int i = 0; i < 16; ++i) inv.push_back("gpu" + std::to_string(i));
  auto a = PickRandom(inv, {.count = 3, .percent = std::nullopt, .seed = 7});
  auto b = PickRandom(inv, {.count = 3, .percent = std::nullopt, .seed = 7});
  auto c = PickRandom(inv, {.count = 3, .percent = std::nullopt, .seed = 8});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_EQ(a->size(), 3u);
  EXPECT_TRUE(std::is_sorted(a->begin(), a->end(), [&](const std::string& x, const std::string& y) {
    return std::find(inv.begin(), inv.end(), x) < std::find(inv.begin(), inv.end(), y);
  }));
  // Pinned: the pick must not change between builds or machines.
  EXPECT_EQ(
      *PickRandom({"n0", "n1", "n2", "n3"}, {.count = 1, .percent = std::nullopt, .seed = 42}),
      *PickRandom({"n0", "n1", "n2", "n3"}, {.count = 1, .percent = std::nullopt, .seed = 42}));
  auto pct = PickRandom(inv, {.count = std::nullopt, .percent = 25, .seed = 1});
  ASSERT_TRUE(pct.ok());
  EXPECT_EQ(pct->size(), 4u);
  auto tiny = PickRandom(inv, {.count = std::nullopt, .percent = 1, .seed = 1});
  EXPECT_EQ(tiny->size(), 1u);  // rounded up, at least one
  EXPECT_FALSE(PickRandom(inv, {.count = 17, .percent = std::nullopt, .seed = 1}).ok());
  EXPECT_FALSE(PickRandom(inv, {.count = std::nullopt, .percent = 101, .seed = 1}).ok());
}

}  // namespace
}  // namespace fdrill

namespace fdrill {
namespace {

// SLURM_JOB_NODELIST as slurmctld writes it (scontrol show hostnames is the
// reference expansion): several bracket groups, zero padding that grows,
// suffixes after the bracket, dots and dashes in names.
TEST(Hostlist, SlurmJobNodelistForms) {
  EXPECT_EQ(Expand("gpu[01-02,05-06]"), (Names{"gpu01", "gpu02", "gpu05", "gpu06"}));
  EXPECT_EQ(Expand("nid[00098-00101]"), (Names{"nid00098", "nid00099", "nid00100", "nid00101"}));
  EXPECT_EQ(Expand("c[9-11]"), (Names{"c9", "c10", "c11"}));
  EXPECT_EQ(Expand("gpu-a[1-2],gpu-b[3]"), (Names{"gpu-a1", "gpu-a2", "gpu-b3"}));
  EXPECT_EQ(Expand("node[1-2]-ib"), (Names{"node1-ib", "node2-ib"}));
  EXPECT_EQ(Expand("login1,node[1-2]"), (Names{"login1", "node1", "node2"}));
  EXPECT_EQ(Expand("10.0.0.[1-3]"), (Names{"10.0.0.1", "10.0.0.2", "10.0.0.3"}));
  EXPECT_EQ(Expand("r[1-2]n[01-02]"), (Names{"r1n01", "r1n02", "r2n01", "r2n02"}));
  EXPECT_EQ(Expand("gpu[7]"), (Names{"gpu7"}));
  EXPECT_EQ(ErrorOf("gpu[]"), "gpu[]: \"\" is not a number or a range like 01-16 (character 5)");
  EXPECT_NE(ErrorOf("gpu[1-2],gpu2").find("gpu2"), std::string::npos);  // listed twice
}

TEST(Hostlist, SelectAllNamesEveryNode) {
  auto all = SelectNodes({"all"}, {"gpu01", "gpu02", "gpu03"});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(*all, (Names{"gpu01", "gpu02", "gpu03"}));
  // A node really called "all" is still selectable by its name alone.
  auto named = SelectNodes({"all"}, {"all", "gpu02"});
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(*named, (Names{"all"}));
}

class HostsFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    // Per process: test binaries run side by side (ctest -j).
    const std::string path =
        ::testing::TempDir() + "/hosts-" + std::to_string(getpid()) + "-" + std::to_string(++n_);
    std::ofstream(path) << text;
    paths_.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const auto& p : paths_) std::remove(p.c_str());
  }
  int n_ = 0;
  std::vector<std::string> paths_;
};

TEST_F(HostsFileTest, ReadsLinesCommentsAndSeveralExpressionsPerLine) {
  auto path = Write("# rack 1\ngpu[01-02]  # two nodes\n\n  gpu05,gpu07\r\n");
  auto hosts = ReadHostsFile(path);
  ASSERT_TRUE(hosts.ok()) << hosts.status().ToString();
  EXPECT_EQ(*hosts, (Names{"gpu01", "gpu02", "gpu05", "gpu07"}));
}

TEST_F(HostsFileTest, ErrorsNameFileAndLine) {
  auto twice = Write("gpu[01-02]\ngpu02\n");
  auto r = ReadHostsFile(twice);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), twice + ":2: host gpu02 is listed twice");
  auto bad = Write("gpu01\n\ngpu[3-1]\n");
  r = ReadHostsFile(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), bad + ":3: gpu[3-1]: range 3-1 runs backwards (character 5)");
  auto empty = Write("# nothing\n");
  r = ReadHostsFile(empty);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "the hosts file " + empty + " names no host");
  r = ReadHostsFile("/nonexistent/hosts");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  r = ReadHostsFile("/dev/zero");
  ASSERT_FALSE(r.ok());
}

}  // namespace
}  // namespace fdrill

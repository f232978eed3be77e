// SnapshotResidue: the post-drill snapshot against the one before, as the
// drill's residue event lists the differences.
#include "harness/controller/residue.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

Json Link(const std::string& name, bool up, const std::string& qdisc) {
  return {{"name", name}, {"admin_up", up}, {"qdisc", qdisc}, {"qdisc_handle", "0:"}};
}

TEST(SnapshotResidue, NothingChangedIsNoResidue) {
  const Json s = {{"links", {Link("fab0", true, "noqueue")}},
                  {"host", {{"burners", Json::array()}}}};
  EXPECT_EQ(SnapshotResidue("n1", s, Result<Json>(s)), Json::array());
}

TEST(SnapshotResidue, NamesEveryChangedAddedAndRemovedObject) {
  const Json before = {{"links", {Link("fab0", true, "noqueue"), Link("fab1", true, "noqueue")}},
                       {"host", {{"burners", Json::array()}, {"stopped_ranks", Json::array()}}}};
  const Json after = {{"links", {Link("fab0", false, "netem"), Link("fab2", true, "noqueue")}},
                      {"host", {{"burners", {123}}}}};
  const Json items = SnapshotResidue("n1", before, Result<Json>(after));
  ASSERT_EQ(items.size(), 5u) << items.dump();
  EXPECT_EQ(
      items[0],
      Json({{"node", "n1"}, {"object", "fab0 admin_up"}, {"before", true}, {"after", false}}));
  EXPECT_EQ(items[1]["object"], "fab0 qdisc");
  EXPECT_EQ(items[2], Json({{"node", "n1"},
                            {"object", "fab2"},
                            {"before", nullptr},
                            {"after", Link("fab2", true, "noqueue")}}));
  EXPECT_EQ(items[3], Json({{"node", "n1"},
                            {"object", "fab1"},
                            {"before", Link("fab1", true, "noqueue")},
                            {"after", nullptr}}));
  // stopped_ranks is missing after (an older agent): not compared.
  EXPECT_EQ(items[4]["object"], "host burners");
}

TEST(SnapshotResidue, AQueueUnderTheRootThatCameBackDifferentIsResidue) {
  // A switch port: same root kind and handle, but its fifo's limit changed.
  Json port = Link("up0", true, "tbf");
  port["qdisc_handle"] = "1:";
  port["qdisc_tree"] = {R"(tbf 1: root {"burst":655312,"lat":20000,"rate":62500000})",
                        R"(bfifo 10: parent 1:1 {"limit":1905360})"};
  Json changed = port;
  changed["qdisc_tree"][1] = R"(bfifo 10: parent 1:1 {"limit":1000})";
  const Json before = {{"links", {port}}};
  const Json after = {{"links", {changed}}};
  const Json items = SnapshotResidue("rail0-leaf0", before, Result<Json>(after));
  ASSERT_EQ(items.size(), 1u) << items.dump();
  EXPECT_EQ(items[0]["object"], "up0 qdisc_tree");
  EXPECT_EQ(SnapshotResidue("rail0-leaf0", before, Result<Json>(before)), Json::array());
}

TEST(SnapshotResidue, AFailedSnapshotIsOneItem) {
  const Json items = SnapshotResidue("n2", Json::object(), Result<Json>(DeadlineExceeded("late")));
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0],
            Json({{"node", "n2"}, {"object", "snapshot"}, {"before", "taken"}, {"after", "late"}}));
}

TEST(SnapshotResidue, NoSnapshotBeforeCountsEveryLinkAsNew) {
  const Json after = {{"links", {Link("fab0", true, "noqueue")}}};
  const Json items = SnapshotResidue("n3", Json(), Result<Json>(after));
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["object"], "fab0");
  EXPECT_EQ(items[0]["before"], nullptr);
}

}  // namespace
}  // namespace fdrill

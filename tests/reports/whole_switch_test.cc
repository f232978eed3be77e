// A whole switch named as the culprit (reports/whole_switch.h) only when
// every one of its sampled cables rose together: a leaf without power, not
// one node's link, not a few of a leaf's ports, not two ends of one cable.
#include "reports/whole_switch.h"

#include <gtest/gtest.h>

#include "reports/localise.h"

namespace fdrill {
namespace {

// A leaf with n0..n3's fab1 on swp0..swp3 and an uplink to a spine.
std::vector<InventorySwitch> LeafAndSpine() {
  InventorySwitch leaf{.name = "leaf0", .role = "leaf"};
  for (int n = 0; n < 4; ++n)
    leaf.ports.push_back(
        {.name = "swp" + std::to_string(n), .to = "n" + std::to_string(n) + ":fab1"});
  leaf.ports.push_back({.name = "up0", .to = "spine:dn0"});
  InventorySwitch spine{.name = "spine", .role = "spine"};
  spine.ports.push_back({.name = "dn0", .to = "leaf0:up0"});
  return {leaf, spine};
}

// Every second from 0 to 30 s: each node's fab0 and fab1, the leaf's ports;
// the carriers in DOWN (as "node link") change twice at 16 s.
std::vector<Event> CarrierSamples(const std::set<std::string>& down, bool leaf_sampled = true) {
  std::vector<Event> out;
  auto sample = [&](double t, const std::string& node, const std::vector<std::string>& links) {
    Event e{.t = t, .type = "counters", .node = node};
    for (const std::string& l : links) {
      const double changes = t >= 16 && down.count(node + " " + l) ? 2 : 0;
      e.counters.push_back({l + ".carrier_changes", changes});
      e.counters.push_back({l + ".tx_bytes", t * 1e6});
    }
    out.push_back(std::move(e));
  };
  for (int t = 0; t <= 30; ++t) {
    for (int n = 0; n < 4; ++n) sample(t, "n" + std::to_string(n), {"fab0", "fab1"});
    if (leaf_sampled) sample(t, "leaf0", {"swp0", "swp1", "swp2", "swp3", "up0", "br0"});
  }
  return out;
}

constexpr LocaliseWindow kSwitchWindow{.from_s = 15, .to_s = 20, .ref_from_s = 0, .ref_to_s = 10};

std::optional<Culprit> CulpritOf(const std::vector<Event>& events,
                                 const std::vector<InventorySwitch>& switches) {
  return Localise(CounterIndex(events), {}, kSwitchWindow, switches);
}

TEST(WholeSwitch, EveryCableOfALeafDownAtOnceNamesTheLeaf) {
  // Its bridge too (br0: the emulated leaf's own link, facing no cable).
  const auto events =
      CarrierSamples({"n0 fab1", "n1 fab1", "n2 fab1", "n3 fab1", "leaf0 swp0", "leaf0 swp1",
                      "leaf0 swp2", "leaf0 swp3", "leaf0 up0", "leaf0 br0"});
  auto c = CulpritOf(events, LeafAndSpine());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->element, "switch leaf0");
  EXPECT_EQ(c->node, "leaf0");
  EXPECT_TRUE(c->link.empty());
  EXPECT_EQ(c->confidence, "high");
  ASSERT_FALSE(c->evidence.empty());
  EXPECT_NE(c->evidence[0].find("5 cables rose together, every cable of leaf0"), std::string::npos)
      << c->evidence[0];
  // Without the cabling (a real cluster's run), one of its links, as before.
  auto flat = CulpritOf(events, {});
  ASSERT_TRUE(flat);
  EXPECT_TRUE(flat->element.starts_with("link ")) << flat->element;
  EXPECT_EQ(flat->confidence, "medium");
}

TEST(WholeSwitch, ALeafWhoseOwnPortsWereNotSampledIsNamedByTheNodesBehindIt) {
  auto c = CulpritOf(CarrierSamples({"n0 fab1", "n1 fab1", "n2 fab1", "n3 fab1"}, false),
                     LeafAndSpine());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->element, "switch leaf0");
}

// A spine without power: its leaves are alive, so no node link changes;
// its own downlinks (sampled while the fault names it) lose carrier, both of
// them, and it is the one switch both cables end on.
TEST(WholeSwitch, EveryDownlinkOfASpineNamesTheSpine) {
  InventorySwitch spine{.name = "spine", .role = "spine"};
  spine.ports = {{.name = "dn0", .to = "leaf0:up0"}, {.name = "dn1", .to = "leaf1:up0"}};
  std::vector<InventorySwitch> fabric = {
      {.name = "leaf0", .role = "leaf"}, {.name = "leaf1", .role = "leaf"}, spine};
  fabric[0].ports = {{.name = "swp0", .to = "n0:fab0"}, {.name = "up0", .to = "spine:dn0"}};
  fabric[1].ports = {{.name = "swp1", .to = "n1:fab0"}, {.name = "up0", .to = "spine:dn1"}};
  std::vector<Event> events;
  for (int t = 0; t <= 30; ++t) {
    for (const char* node : {"n0", "n1"}) {
      Event e{.t = static_cast<double>(t), .type = "counters", .node = node};
      e.counters.push_back({"fab0.carrier_changes", 0});
      events.push_back(std::move(e));
    }
    Event e{.t = static_cast<double>(t), .type = "counters", .node = "spine"};
    for (const char* port : {"dn0", "dn1"})
      e.counters.push_back({std::string(port) + ".carrier_changes", t >= 16 ? 2.0 : 0.0});
    events.push_back(std::move(e));
  }
  auto c = CulpritOf(events, fabric);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->element, "switch spine");
  EXPECT_EQ(c->confidence, "high");
}

TEST(WholeSwitch, SomeOfALeafsCablesAreLinksNotTheLeaf) {
  auto c =
      CulpritOf(CarrierSamples({"n0 fab1", "n2 fab1", "leaf0 swp0", "leaf0 swp2"}), LeafAndSpine());
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->element == "link n0 fab1" || c->element == "link n2 fab1" ||
              c->element == "link leaf0 swp0" || c->element == "link leaf0 swp2")
      << c->element;
  EXPECT_EQ(c->confidence, "medium");
}

TEST(WholeSwitch, BothEndsOfOneCableAreThatCable) {
  // n2's fab1 and the leaf port facing it: one cable, level evidence.
  auto c = CulpritOf(CarrierSamples({"n2 fab1", "leaf0 swp2"}), LeafAndSpine());
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->element == "link n2 fab1" || c->element == "link leaf0 swp2") << c->element;
}

TEST(WholeSwitch, ALinkNoSwitchFacesKeepsTheLinks) {
  // Every fab1 down and n1's fab0 too, which no modelled switch faces.
  auto c = CulpritOf(CarrierSamples({"n0 fab1", "n1 fab1", "n2 fab1", "n3 fab1", "n1 fab0"}, false),
                     LeafAndSpine());
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->element.starts_with("link ")) << c->element;
}

// A real cluster's leaf from its topology file (harness/scenario/
// topology_switches.h): each node's ib0 and the HCA port under it are one
// cable, listed twice under one port name. RDMA traffic moves the HCA
// port's counters, not IPoIB's: a leaf without power shows as link_downed
// on every node's mlx5_0 port 1 while each ib0 is sampled and quiet.
std::vector<InventorySwitch> TopologyLeaf() {
  InventorySwitch leaf{.name = "leaf01", .role = "leaf"};
  for (const char* node : {"gpu01", "gpu02", "gpu03"}) {
    const std::string n = node;
    leaf.ports.push_back({.name = n + "/ib0", .to = n + ":ib0"});
    leaf.ports.push_back({.name = n + "/ib0", .to = n + ":ib/mlx5_0/1"});
  }
  return {leaf};
}

std::vector<Event> HcaDowned(const std::set<std::string>& down) {
  std::vector<Event> out;
  for (int t = 0; t <= 30; ++t) {
    for (const char* node : {"gpu01", "gpu02", "gpu03"}) {
      Event e{.t = static_cast<double>(t), .type = "counters", .node = node};
      e.counters.push_back({"ib0.carrier_changes", 0});
      e.counters.push_back({"ib0.tx_bytes", t * 1e3});
      e.counters.push_back({"ib/mlx5_0/1.link_downed", t >= 16 && down.count(node) ? 1.0 : 0.0});
      e.counters.push_back({"ib/mlx5_0/1.port_xmit_data", t * 1e8});
      out.push_back(std::move(e));
    }
  }
  return out;
}

TEST(WholeSwitch, EveryHcaPortOnALeafFromTheTopologyNamesTheLeafThoughIpoibIsQuiet) {
  auto c = CulpritOf(HcaDowned({"gpu01", "gpu02", "gpu03"}), TopologyLeaf());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->element, "switch leaf01");
  EXPECT_EQ(c->confidence, "high");
  ASSERT_FALSE(c->evidence.empty());
  EXPECT_NE(c->evidence[0].find("3 cables rose together"), std::string::npos) << c->evidence[0];
}

TEST(WholeSwitch, OneNodesHcaPortAndItsNetdevAreOneCableNotTheLeaf) {
  // gpu01's HCA port and its ib0 both rose: one cable (one port name), and
  // the leaf's other cables were sampled and quiet.
  auto events = HcaDowned({"gpu01"});
  for (Event& e : events) {
    if (e.node == "gpu01" && e.t >= 16) e.counters[0].second = 1;  // ib0.carrier_changes
  }
  auto c = CulpritOf(events, TopologyLeaf());
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->element == "link gpu01 ib/mlx5_0/1" || c->element == "link gpu01 ib0")
      << c->element;
}

}  // namespace
}  // namespace fdrill

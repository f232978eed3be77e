// End-to-end on the leaf/spine fabric: `fdrill fabric up --nodes 8 --rails 2
// --leaves 2 --port-rate 500mbit --oversubscription 2`, what `fdrill
// inventory` and the map say about it, and the library's tiered drills run
// on it. Each test brings the fabric up and tears it down in TearDown, also
// when an assertion fails; like drill_e2e_test it refuses to run over a
// fabric that is already up.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/host/real_process_runner.h"
#include "tests/support/e2e_cli.h"
#include "tests/support/fabric_test.h"
#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

using e2e::Fdrill;
using e2e::ReadJson;
using e2e::Sh;
using e2e::Spawn;

class TieredDrillE2E : public e2e::FabricTest {
 protected:
  void SetUp() override {
    BringUp("fdrill-tiered-e2e-", {"--nodes", "8", "--rails", "2", "--leaves", "2", "--port-rate",
                                   "500mbit", "--oversubscription", "2"});
  }

  // Every node link's and switch port's qdiscs (the modelled capacities
  // included) and admin state: what a drill must leave exactly as it found
  // it. Admin state alone: carrier (NO-CARRIER, LOWER_UP, the operstate) is
  // the kernel's echo of it and was once caught mid-change on a spine port
  // after a passing drill.
  static std::string AdminStates(const std::string& ns) {
    std::string out;
    std::istringstream in(Sh({"ip", "-n", ns, "-o", "link", "show"}));
    for (std::string line; std::getline(in, line);) {
      auto name_at = line.find(": ");
      auto open = line.find('<'), close = line.find('>');
      if (name_at == std::string::npos || open == std::string::npos || close == std::string::npos)
        continue;
      std::string name = line.substr(name_at + 2, line.find(':', name_at + 2) - name_at - 2);
      std::string flags = "," + line.substr(open + 1, close - open - 1) + ",";
      out += name + (flags.find(",UP,") != std::string::npos ? " up\n" : " down\n");
    }
    return out;
  }
  std::string FabricLinks() {
    std::string out;
    for (const char* sw : {"rail0-leaf0", "rail0-leaf1", "rail0-spine", "rail1-leaf0",
                           "rail1-leaf1", "rail1-spine"}) {
      const std::string ns = Netns(sw);
      out += Sh({"tc", "-n", ns, "qdisc", "show"});
      out += AdminStates(ns);
    }
    for (int i = 0; i < 8; ++i) {
      std::string ns = Netns("n" + std::to_string(i));
      out += Sh({"tc", "-n", ns, "qdisc", "show"});
      out += AdminStates(ns);
    }
    return out;
  }

  // Runs scenarios/NAME.yaml into work_/NAME at TIME_SCALE (fdrill run
  // --time-scale; half length by default, for issue 55's CI time, where the
  // drill's own expectations hold at it) and returns its summary.json,
  // having checked that the drill passed and left no residue.
  json RunLibraryDrill(const std::string& name, const std::string& time_scale = "0.5") {
    const fs::path out = work_ / name;
    auto run = Fdrill({"run", std::string(FDRILL_SOURCE_DIR) + "/scenarios/" + name + ".yaml",
                       "--out", out.string(), "--time-scale", time_scale},
                      300);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    json s = ReadJson(out / "summary.json");
    EXPECT_EQ(s["verdict"], "pass") << s["expectations"].dump(2) << s["errors"].dump(2);
    EXPECT_TRUE(s["residue"].empty()) << s["residue"].dump();
    return s;
  }
};

TEST_F(TieredDrillE2E, InventoryListsEveryRailOnEveryNodeAndTheSwitchesWithTheirPorts) {
  auto inv = Fdrill({"inventory", "--json"});
  ASSERT_EQ(inv.exit_code, 0) << inv.err;
  json c = json::parse(inv.out);
  ASSERT_EQ(c["nodes"].size(), 8u);
  for (const auto& node : c["nodes"]) {
    std::set<std::string> netdevs;
    for (const auto& n : node["netdevs"]) netdevs.insert(n["name"].get<std::string>());
    // Issue 21: exactly the node's own links, never the machine's.
    EXPECT_EQ(netdevs, (std::set<std::string>{"fab0", "fab1", "mgmt0"})) << node.dump();
  }
  ASSERT_EQ(c["switches"].size(), 6u);  // per rail 2 leaves and a spine
  const json& leaf = c["switches"][4];
  EXPECT_EQ(leaf["name"], "rail1-leaf1");
  ASSERT_EQ(leaf["ports"].size(), 5u);
  EXPECT_EQ(leaf["ports"][0]["to"], "n4:fab1");
  EXPECT_EQ(leaf["ports"][4]["to"], "rail1-spine:dn1");
  EXPECT_EQ(leaf["ports"][4]["rate_bps"], 1'000'000'000);  // 4 x 500 Mbit/s / 2

  auto table = Fdrill({"inventory"});
  EXPECT_THAT(table.out, HasSubstr("up0 -> rail0-spine:dn0 1gbit"));
  EXPECT_THAT(table.out, HasSubstr("fab1"));

  // The map on disk is the one drills read with `topology: emulated`.
  auto validate = Fdrill({"validate", FabricDir() + "/topology.yaml"});
  EXPECT_EQ(validate.exit_code, 0) << validate.out << validate.err;
}

TEST_F(TieredDrillE2E, ADrillOfAnotherShapeIsRefusedBeforeAnythingIsTouched) {
  const std::string before = FabricLinks();
  auto run = Fdrill({"run", std::string(FDRILL_SOURCE_DIR) + "/scenarios/quickstart.yaml", "--out",
                     (work_ / "q").string()});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_THAT(run.err, HasSubstr("the drill needs an emulated fabric of 4 nodes x 1 rail x 1 leaf, "
                                 "unshaped and the one up is 8 nodes x 2 rails x 2 leaves"));
  EXPECT_THAT(run.err, HasSubstr("fdrill fabric up --nodes 4`"));
  EXPECT_EQ(FabricLinks(), before);
}

// One rail of two down for 10 s on one node: Open MPI striping over both
// rails stalls (it does not move fragments off the dead rail's TCP
// connection) and is whole after; nothing is left on nodes or switches.
TEST_F(TieredDrillE2E, RailDownIsAPartialFailureTheJobLivesThrough) {
  const std::string before = FabricLinks();
  // Its expected stall (min stall_ms) needs the rail down for its whole window.
  json s = RunLibraryDrill("rail-down", "1");
  ASSERT_EQ(s["faults"].size(), 1u);
  const json& f = s["faults"][0];
  std::cout << "rail-down: " << f.dump() << "\n";
  // The job stalled through the outage instead of carrying on over rail 0,
  // and never failed.
  EXPECT_GE(f["stall_ms"].get<double>(), 9000.0) << f.dump();
  EXPECT_TRUE(f["job_failed_after_s"].is_null()) << f.dump();
  ASSERT_TRUE(f["time_to_recover_s"].is_number()) << f.dump();
  EXPECT_EQ(FabricLinks(), before);
}

// A fault held by a switch's own agent: rail 0's leaf-0 uplink capped under
// its modelled tbf, the job slowed, the port's tbf and fifo back exactly.
TEST_F(TieredDrillE2E, UplinkCongestionOnASwitchSlowsTheJobAndLeavesThePortAsFound) {
  const std::string before = FabricLinks();
  const std::string port_before =
      Sh({"tc", "-n", Netns("rail0-leaf0"), "qdisc", "show", "dev", "up0"});
  ASSERT_NE(port_before.find("qdisc bfifo 10: parent 1:1"), std::string::npos) << port_before;
  json s = RunLibraryDrill("uplink-congestion");
  ASSERT_EQ(s["faults"].size(), 2u);
  const json& f = s["faults"][0];
  std::cout << "uplink-congestion: " << f.dump() << "\n";
  EXPECT_EQ(f["node"], "rail0-leaf0");
  EXPECT_EQ(f["target"], "up0");
  EXPECT_GE(f["slowdown"].get<double>(), 2.0) << f.dump();
  EXPECT_TRUE(f["job_failed_after_s"].is_null()) << f.dump();
  // The spine's loss on the way down to leaf 0 (port_loss: its own nft table).
  const json& loss = s["faults"][1];
  std::cout << "downlink-loss: " << loss.dump() << "\n";
  EXPECT_EQ(loss["node"], "rail0-spine");
  EXPECT_EQ(loss["target"], "dn0");
  EXPECT_GE(loss["slowdown"].get<double>(), 1.3) << loss.dump();
  // The tenant inside leaf 0 (n0, n1) never crossed the uplink: untouched,
  // measured against its own baseline; the crossing tenant is the top level.
  for (const json& fault : s["faults"]) {
    EXPECT_GE(fault["workloads"]["cross"]["slowdown"].get<double>(), 1.3) << fault.dump();
    EXPECT_LE(fault["workloads"]["local"]["slowdown"].get<double>(), 1.1) << fault.dump();
  }
  EXPECT_EQ(Sh({"ip", "netns", "exec", Netns("rail0-spine"), "nft", "list", "tables"}), "");
  // The switch's agent was in the drill: it connected and was snapshotted.
  const std::string events = Sh({"cat", (work_ / "uplink-congestion" / "events.jsonl").string()});
  EXPECT_NE(events.find(R"("node":"rail0-leaf0")"), std::string::npos);
  EXPECT_EQ(Sh({"tc", "-n", Netns("rail0-leaf0"), "qdisc", "show", "dev", "up0"}), port_before);
  EXPECT_EQ(FabricLinks(), before);
}

// Two tenants, one on each leaf: a port capped on a's leaf slows a, and b's
// slowdown, measured on b's own iterations, stays within 1.1.
TEST_F(TieredDrillE2E, BlastRadiusProvenByMeasurement) {
  const std::string before = FabricLinks();
  json s = RunLibraryDrill("blast-radius-proof");
  ASSERT_EQ(s["faults"].size(), 1u);
  const json& f = s["faults"][0];
  std::cout << "blast-radius-proof: " << f["workloads"].dump() << "\n";
  EXPECT_GE(f["workloads"]["a"]["slowdown"].get<double>(), 2.0) << f.dump();
  EXPECT_LE(f["workloads"]["b"]["slowdown"].get<double>(), 1.1) << f.dump();
  EXPECT_EQ(s["workloads"]["a"]["nodes"], json({"n0", "n1", "n2", "n3"}));
  EXPECT_EQ(s["workloads"]["b"]["ranks"], 4);
  // Each tenant had its own mpirun, hostfile and log; every record says whose.
  const fs::path dir = work_ / "blast-radius-proof";
  EXPECT_EQ(Sh({"cat", (dir / "hostfile-b").string()}).find("198.18.0."), 0u);
  EXPECT_TRUE(fs::exists(dir / "workload-a.log"));
  std::ifstream metrics(dir / "metrics.jsonl");
  std::set<std::string> tags;
  for (std::string line; std::getline(metrics, line);) tags.insert(json::parse(line)["workload"]);
  EXPECT_EQ(tags, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(FabricLinks(), before);
}

// A neighbour arriving mid-drill on a thin (8:1) spine: the job under test
// slows by a measured factor; the neighbour's launch is on the timeline.
TEST_F(TieredDrillE2E, NoisyNeighbourOnAThinSpineSlowsTheJob) {
  auto down = Fdrill({"fabric", "down"});
  ASSERT_EQ(down.exit_code, 0) << down.err;
  auto up = Fdrill({"fabric", "up", "--nodes", "8", "--rails", "2", "--leaves", "2", "--port-rate",
                    "500mbit", "--oversubscription", "8"});
  ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
  json s = RunLibraryDrill("noisy-neighbour");
  const json& a = s["workloads"]["a"];
  const json& b = s["workloads"]["b"];
  std::cout << "noisy-neighbour: a " << a["phases"].dump() << "\nb " << b["phases"].dump() << "\n";
  ASSERT_EQ(a["phases"].size(), 2u);
  EXPECT_GE(a["phases"][1]["slowdown"].get<double>(), 1.3);
  EXPECT_EQ(b["start"], "noise");
  EXPECT_GT(b["phases"][1]["iterations"].get<int>(), 0);  // it ran, from phase noise on
  EXPECT_EQ(b["phases"][0]["iterations"].get<int>(), 0);
  EXPECT_TRUE(s["errors"].empty()) << s["errors"].dump();
}

// A whole leaf dark (switch_down by its own agent): n0-n3 lose rail 1.
TEST_F(TieredDrillE2E, LeafDownStallsTheJobAndEveryPortComesBack) {
  const std::string before = FabricLinks();
  // Its expected stall (min stall_ms) needs the leaf down for its whole window.
  json s = RunLibraryDrill("leaf-down", "1");
  ASSERT_EQ(s["faults"].size(), 1u);
  const json& f = s["faults"][0];
  std::cout << "leaf-down: " << f.dump() << "\n";
  EXPECT_EQ(f["node"], "rail1-leaf0");
  EXPECT_GE(f["stall_ms"].get<double>(), 9000.0) << f.dump();
  EXPECT_TRUE(f["job_failed_after_s"].is_null()) << f.dump();
  // Every node behind the leaf lost carrier on fab1 at once, and the leaf's
  // own ports with them: the culprit is the switch, in the report and live.
  EXPECT_EQ(f["localisation"]["element"], "switch rail1-leaf0") << f["localisation"].dump(2);
  EXPECT_EQ(f["localisation"]["confidence"], "high") << f["localisation"].dump(2);
  EXPECT_EQ(f["culprit"], "rail1-leaf0");
  EXPECT_TRUE(f["time_to_localise_s"].is_number()) << f.dump();
  EXPECT_EQ(FabricLinks(), before);
}

// A switch's agent keeps its own lease: the controller SIGKILLed while a
// switch holds a fault, the switch reverts it by itself within the lease TTL
// and its port is exactly as found.
TEST_F(TieredDrillE2E, KilledControllerLeavesTheSwitchAsFoundWithinTtl) {
  const std::string port_before =
      Sh({"tc", "-n", Netns("rail0-leaf0"), "qdisc", "show", "dev", "up0"});
  const fs::path drill = work_ / "hold.yaml";
  std::ofstream(drill) << R"(name: switch-hold
fabric:
  emulated: {nodes: 8, rails: 2, leaves: 2, port_rate: 500mbit, oversubscription: 2}
topology: emulated
workload: {size: 64K}
safety: {lease_ttl: 3s, lease_renew: 500ms, max_faulted_nodes: 4}
phases:
  - name: baseline
    duration: 2s
  - name: hold
    duration: 60s
    faults:
      - {id: capped, kind: link_rate, switch: rail0-leaf0, params: {interface: up0, rate: 10mbit}}
  - name: after
    duration: 2s
)";
  const fs::path out = work_ / "hold";
  pid_t controller = Spawn({FDRILL_BIN, "run", drill.string(), "--out", out.string()},
                           (work_ / "controller.log").string());
  auto capped = [this] {
    return Sh({"tc", "-n", Netns("rail0-leaf0"), "qdisc", "show", "dev", "up0"}).find("fd1:") !=
           std::string::npos;
  };
  bool applied = false;
  for (int i = 0; i < 600 && !applied; ++i) {
    applied = capped();
    if (!applied) usleep(100'000);
  }
  ASSERT_TRUE(applied) << Sh({"cat", (work_ / "controller.log").string()});
  ASSERT_EQ(kill(controller, SIGKILL), 0);
  waitpid(controller, nullptr, 0);
  const auto killed = std::chrono::steady_clock::now();
  bool reverted = false;
  for (int i = 0; i < 80 && !reverted; ++i) {
    reverted = !capped();
    if (!reverted) usleep(100'000);
  }
  const double after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  ASSERT_TRUE(reverted) << "rail0-leaf0 up0 still capped 8 s after the controller died";
  std::printf(
      "[ measured ] switch fault reverted %.3f s after SIGKILL of the controller (TTL 3 s)\n",
      after);
  EXPECT_LE(after, 4.0);
  EXPECT_EQ(Sh({"tc", "-n", Netns("rail0-leaf0"), "qdisc", "show", "dev", "up0"}), port_before);
  // The ranks go too: nothing of the drill outlives the lease.
  for (int i = 0; i < 100 && ProcessesInFabric({"fdrill-collective"}) > 0; ++i) usleep(100'000);
  EXPECT_EQ(ProcessesInFabric({"fdrill-collective"}), 0);
}

}  // namespace
}  // namespace fdrill

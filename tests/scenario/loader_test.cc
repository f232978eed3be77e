#include <gtest/gtest.h>

#include "harness/scenario/scenario.h"
#include "tests/scenario/scenario_text.h"

namespace fdrill {
namespace {

constexpr char kGood[] = R"(name: t
fabric:
  emulated: {nodes: 4}
workload: {size: 1M}
phases:
  - name: baseline
    duration: 5s
  - name: hit
    duration: 2s
    faults:
      - kind: link_rate
        node: n1
        params: {interface: fab0, rate: 100mbit}
  - name: recovery
    duration: 5s
expect:
  max_time_to_recover: 3s
)";

using scenario_test::ErrorOf;
using scenario_test::Replace;

TEST(ScenarioLoader, LoadsTheQuickstart) {
  auto s = LoadScenario(std::string(FDRILL_SOURCE_DIR) + "/scenarios/quickstart.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->nodes, 4);
  EXPECT_EQ(s->phases.size(), 5u);
  EXPECT_EQ(s->TotalDuration(), std::chrono::seconds(58));
  EXPECT_EQ(s->phases[1].faults[0].kind, "link_rate");
  EXPECT_EQ(s->phases[1].faults[0].params["rate"], "100mbit");
  EXPECT_EQ(s->phases[3].faults[0].params["down"], "3s");
  EXPECT_EQ(s->workload.size_bytes, 4u << 20);
}

TEST(ScenarioLoader, DefaultsAndGeneratedIds) {
  auto s = ParseScenario(kGood, "drill.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->phases[1].faults[0].id, "hit-link_rate");
  EXPECT_EQ(s->phases[1].faults[0].line, 11);
  EXPECT_EQ(s->expect.max_time_to_recover_s, 3.0);
  EXPECT_EQ(s->lease_ttl, std::chrono::seconds(5));
}

TEST(ScenarioLoader, UnknownKeyNamesFileLineColumnAndSuggests) {
  std::string e = ErrorOf(Replace(kGood, "    duration: 2s", "    duraton: 2s"));
  EXPECT_EQ(
      e.rfind("drill.yaml:9:5: unknown key \"duraton\" in phase; did you mean \"duration\"?", 0),
      0u)
      << e;
}

// Found by fuzz/scenario_fuzz: a mapping or list where a string belongs
// crashed `fdrill run` with an uncaught yaml-cpp exception. Each is now a
// refusal naming file, line and column.
TEST(ScenarioLoader, AMappingOrListWhereAStringBelongsIsRefusedNotACrash) {
  EXPECT_EQ(ErrorOf(Replace(kGood, "name: t", "name: {nodes: 4}"))
                .rfind("drill.yaml:1:7: name must be a string", 0),
            0u);
  EXPECT_EQ(ErrorOf(Replace(kGood, "  - name: hit", "  - name: [hit]"))
                .rfind("drill.yaml:8:11: phase name must be", 0),
            0u);
  EXPECT_EQ(ErrorOf(Replace(kGood, "{size: 1M}", "{size: {a: 1}}"))
                .rfind("drill.yaml:4:18: workload.size must be", 0),
            0u);
  std::string key = ErrorOf(Replace(kGood, "expect:", "[x]: 1\nexpect:"));
  EXPECT_EQ(key.rfind("drill.yaml:", 0), 0u) << key;
  EXPECT_NE(key.find("must be a plain word"), std::string::npos) << key;
  std::string id = ErrorOf(
      Replace(kGood, "      - kind: link_rate", "      - id: {a: b}\n        kind: link_rate"));
  EXPECT_NE(id.find("fault id must be a string"), std::string::npos) << id;
  std::string param_key = ErrorOf(Replace(kGood, "{interface: fab0, rate: 100mbit}",
                                          "{interface: fab0, rate: 100mbit, [k]: 1}"));
  EXPECT_EQ(param_key.rfind("drill.yaml:", 0), 0u) << param_key;
}

// Also from scenario_fuzz: an invalid UTF-8 byte in a param crashed the
// chain-name hash (nlohmann refuses to dump it). The file is refused first.
TEST(ScenarioLoader, InvalidUtf8IsRefusedWithItsPlace) {
  std::string e = ErrorOf(Replace(kGood, "interface: fab0",
                                  "interface: fa\xc0\xc0"
                                  "b0"));
  EXPECT_EQ(e, "drill.yaml:13:31: not valid UTF-8 (a scenario is UTF-8 text)");
  EXPECT_TRUE(
      ParseScenario(Replace(kGood, "name: t", "name: t\xc3\xa9"), "drill.yaml").ok());  // é is fine
}

TEST(ScenarioLoader, BadUnitIsCaughtWithAHint) {
  std::string e = ErrorOf(Replace(kGood, "rate: 100mbit", "rate: 100mbps"));
  EXPECT_NE(e.find("drill.yaml:13:"), std::string::npos) << e;
  EXPECT_NE(e.find("params.rate"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean \"100mbit\""), std::string::npos) << e;
  std::string d = ErrorOf(Replace(kGood, "duration: 2s", "duration: 2"));
  EXPECT_NE(d.find("drill.yaml:9:"), std::string::npos) << d;
  EXPECT_NE(d.find("no unit"), std::string::npos) << d;
}

TEST(ScenarioLoader, MissingTargetNodeAndUnknownKind) {
  std::string e = ErrorOf(Replace(kGood, "node: n1", "node: n7"));
  EXPECT_NE(e.find("drill.yaml:12:"), std::string::npos) << e;
  EXPECT_NE(e.find("node \"n7\" does not exist; this drill's fabric has n0, n1, n2, n3"),
            std::string::npos)
      << e;
  std::string k = ErrorOf(Replace(kGood, "kind: link_rate", "kind: link_rat"));
  EXPECT_NE(k.find("did you mean \"link_rate\""), std::string::npos) << k;
}

TEST(ScenarioLoader, TimelineAndSafetyRules) {
  std::string first = ErrorOf(Replace(Replace(kGood, "  - name: baseline\n    duration: 5s\n", ""),
                                      "name: t\n", "name: t\n"));
  EXPECT_NE(first.find("first phase must be fault-free"), std::string::npos) << first;
  std::string two = ErrorOf(Replace(
      kGood, "        params: {interface: fab0, rate: 100mbit}",
      "        params: {interface: fab0, rate: 100mbit}\n"
      "      - kind: link_flap\n        node: n2\n        params: {interface: fab0, down: 1s}"));
  EXPECT_NE(two.find("safety.max_faulted_nodes 1 (the default): at t=5s (phase hit +0s) faults "
                     "hit-link_rate and hit-link_flap1 are in force on nodes n1 and n2 (2 nodes)"),
            std::string::npos)
      << two;
  std::string lease = ErrorOf(std::string(kGood) + "safety: {lease_ttl: 1s, lease_renew: 1s}\n");
  EXPECT_NE(lease.find("lease_renew"), std::string::npos) << lease;
  std::string yaml = ErrorOf("name: [unclosed\n");
  EXPECT_NE(yaml.find("not valid YAML"), std::string::npos) << yaml;
}

TEST(ScenarioLoader, EmulatedFabricShapeAndItsMap) {
  const std::string tiered =
      Replace(kGood, "emulated: {nodes: 4}",
              "emulated: {nodes: 8, rails: 2, leaves: 2, oversubscription: 4, port_rate: 1gbit}\n"
              "topology: emulated");
  auto s = ParseScenario(tiered, "drill.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->emulated.nodes, 8);
  EXPECT_EQ(s->emulated.rails, 2);
  EXPECT_EQ(s->emulated.leaves, 2);
  EXPECT_EQ(s->emulated.UplinkRateBps(), 1'000'000'000u);  // 4 x 1 Gbit/s / 4
  ASSERT_TRUE(s->topology.has_value());
  EXPECT_EQ(s->topology->LeafOf("n6", "rail1"), "rail1-leaf1");
  EXPECT_EQ(s->topology->RailOf("n6", "fab1"), "rail1");
  EXPECT_NE(s->topology->file.find("8 nodes x 2 rails x 2 leaves"), std::string::npos);

  auto flat = ParseScenario(kGood, "drill.yaml");
  ASSERT_TRUE(flat.ok());
  EXPECT_TRUE(flat->emulated.Flat());
  EXPECT_EQ(flat->emulated.port_rate_bps, 0u);
}

TEST(ScenarioLoader, EmulatedShapesThatCannotBeBuiltNameTheKey) {
  EXPECT_EQ(ErrorOf(Replace(kGood, "emulated: {nodes: 4}", "emulated: {nodes: 6, leaves: 4}")),
            "drill.yaml:3:13: fabric.emulated.leaves 4 does not divide fabric.emulated.nodes 6: "
            "every leaf holds the same number of nodes (nodes per leaf = nodes / leaves); use a "
            "divisor of 6");
  EXPECT_NE(ErrorOf(Replace(kGood, "emulated: {nodes: 4}",
                            "emulated: {nodes: 4, leaves: 2, oversubscription: 2}"))
                .find("fabric.emulated.oversubscription needs fabric.emulated.port_rate"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Replace(kGood, "emulated: {nodes: 4}", "emulated: {nodes: 4, rails: 9}"))
                .find("fabric.emulated.rails"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(Replace(kGood, "emulated: {nodes: 4}", "emulated: {nodes: 4, port_rate: 1gbps}"))
          .find("drill.yaml:3:35: fabric.emulated.port_rate: "),
      std::string::npos);
  EXPECT_NE(ErrorOf(Replace(kGood, "emulated: {nodes: 4}", "emulated: {nodes: 4, rail: 2}"))
                .find("did you mean \"rails\""),
            std::string::npos);
}

// A fault on a switch port of the emulated fabric: 8 nodes x 2 rails x 2 leaves
// (a leaf's uplink reaches its 4 nodes: the blast radius allows them).
std::string SwitchDrill(const std::string& fault) {
  return Replace(
             Replace(kGood, "emulated: {nodes: 4}",
                     "emulated: {nodes: 8, rails: 2, leaves: 2, oversubscription: 2, port_rate: "
                     "1gbit}\n"
                     "topology: emulated"),
             "      - kind: link_rate\n        node: n1\n        params: {interface: fab0, rate: "
             "100mbit}",
             fault) +
         "safety: {max_faulted_nodes: 4}\n";
}

TEST(ScenarioLoader, SwitchFaultsNameASwitchOfTheMapAndOneOfItsPorts) {
  auto s = ParseScenario(SwitchDrill("      - kind: link_rate\n        switch: rail0-leaf1\n"
                                     "        params: {interface: up0, rate: 100mbit}"),
                         "drill.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const FaultSpec& f = s->phases[1].faults[0];
  EXPECT_TRUE(f.on_switch);
  EXPECT_EQ(f.node, "rail0-leaf1");
  EXPECT_EQ(s->SwitchTargets(), std::vector<std::string>{"rail0-leaf1"});
  EXPECT_TRUE(ParseScenario(kGood, "drill.yaml")->SwitchTargets().empty());
  EXPECT_TRUE(ParseScenario(SwitchDrill("      - kind: link_flap\n        switch: rail1-spine\n"
                                        "        params: {interface: dn0, down: 1s}"),
                            "drill.yaml")
                  .ok());

  EXPECT_EQ(ErrorOf(SwitchDrill("      - kind: link_down\n        switch: rail0-leaf3\n"
                                "        params: {interface: up0}")),
            "drill.yaml:13:17: no switch rail0-leaf3 in this fabric (switches: rail0-leaf0, "
            "rail0-leaf1, rail0-spine, rail1-leaf0, rail1-leaf1, rail1-spine); did you mean "
            "\"rail0-leaf0\"?");
  EXPECT_EQ(ErrorOf(SwitchDrill("      - kind: link_down\n        switch: rail0-leaf1\n"
                                "        params: {interface: swp0}")),
            "drill.yaml:14:17: switch rail0-leaf1 has no port swp0 (ports: swp4, swp5, swp6, "
            "swp7, up0)");
  EXPECT_NE(ErrorOf(SwitchDrill("      - kind: link_loss\n        switch: rail0-leaf1\n"
                                "        params: {interface: up0, percent: 5}"))
                .find("kind link_loss does not act on a switch port; on a switch use link_down, "
                      "link_flap, link_rate or port_loss"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Replace(kGood, "kind: link_rate", "kind: port_loss"))
                .find("port_loss acts on a switch of the emulated fabric: name it with switch: "
                      "(like switch: rail0-leaf0), not node: (on a node's interface: link_loss)"),
            std::string::npos);
  EXPECT_TRUE(ParseScenario(SwitchDrill("      - kind: port_loss\n        switch: rail0-spine\n"
                                        "        params: {interface: dn1, percent: 2}"),
                            "drill.yaml")
                  .ok());
  EXPECT_NE(ErrorOf(SwitchDrill("      - kind: link_down\n        switch: rail0-leaf1\n"
                                "        node: n1\n        params: {interface: up0}"))
                .find("a fault takes switch:, node: or target:, only one"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Replace(SwitchDrill("      - kind: link_down\n        switch: rail0-leaf1\n"
                                        "        params: {interface: up0}"),
                            "topology: emulated", ""))
                .find("needs the fabric's map to know its ports: add `topology: emulated`"),
            std::string::npos);
}

TEST(ScenarioLoader, MissingFileIsNotFound) {
  auto s = LoadScenario("/nonexistent/x.yaml");
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("/nonexistent/x.yaml"), std::string::npos);
}

}  // namespace
}  // namespace fdrill

namespace fdrill {
namespace {

// fdrill run --time-scale: the drill's windows shrink or grow together; what
// belongs to the job or a fault's mechanism keeps its length.
TEST(ScenarioTimeScale, PhasesGatesAndFaultWindowsScaleTheJobsTimeoutsDoNot) {
  Scenario s = scenario_test::Load(R"(name: s
fabric: {emulated: {nodes: 2}}
workload: {mode: train, steps: 100, checkpoint_every: 10, restart: {max_restarts: 1, hang_timeout: 8s}}
phases:
  - {name: baseline, duration: 10s}
  - name: flap
    duration: 6s
    faults:
      - {id: f, kind: link_flap, node: n1, at: 1s, for: 4s, max_duration: 9s,
         params: {interface: fab0, down: 200ms, count: 2, period: 500ms}}
  - {name: recovery, duration: 5s, until: stable, timeout: 30s}
)");
  ASSERT_EQ(s.phases.size(), 3u);
  ASSERT_TRUE(ScaleTimes(&s, 0.5, "--time-scale 0.5").ok());
  EXPECT_EQ(s.time_scale, 0.5);
  EXPECT_EQ(s.phases[0].duration, std::chrono::seconds(5));
  EXPECT_EQ(s.phases[1].duration, std::chrono::seconds(3));
  const FaultSpec& f = s.phases[1].faults.at(0);
  EXPECT_EQ(f.at, std::chrono::milliseconds(500));
  EXPECT_EQ(f.length, std::chrono::seconds(2));
  EXPECT_EQ(f.max_duration, std::chrono::milliseconds(4500));
  EXPECT_EQ(f.params["period"], "500ms");  // the fault's own mechanism
  ASSERT_TRUE(s.phases[2].gate.has_value());
  EXPECT_EQ(s.phases[2].duration, std::chrono::milliseconds(2500));
  EXPECT_EQ(s.phases[2].gate->timeout, std::chrono::seconds(15));
  EXPECT_EQ(s.workload.restart.hang_timeout, std::chrono::seconds(8));  // the job's
  EXPECT_EQ(s.TotalDuration(), std::chrono::milliseconds(5000 + 3000 + 15000));

  for (double bad : {0.0, 0.05, 11.0, -1.0}) {
    Scenario t = s;
    const Status st = ScaleTimes(&t, bad, "--time-scale x");
    EXPECT_EQ(st.message(),
              "--time-scale x: a factor from 0.1 to 10 (0.5 runs every phase and fault window at "
              "half its length)");
    EXPECT_EQ(t.phases[0].duration, s.phases[0].duration);  // nothing changed
  }
}

}  // namespace
}  // namespace fdrill

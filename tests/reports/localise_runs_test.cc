// Anomalies (FindAnomalies) and the localisation on whole synthetic drills
// (tests/reports/synthetic_run.h): a link degraded with no fault of the
// drill's is found and named, also in a drill with no baseline phase;
// noise and the drill's own fault are not anomalies; a live culprit at the
// far end of the faulted cable names it; fdrill's own devices are no
// evidence.
#include <algorithm>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "reports/analysis.h"
#include "reports/localise.h"
#include "reports/run_dir.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::AnalyzeRun;
using reports_test::kBaselineGbps;
using reports_test::SyntheticRun;
using reports_test::TempDir;

// n1's shaper counters, sampled every second; rising from `from` to `to`.
void AddShaperCounters(SyntheticRun& run, double from, double to) {
  for (int t = 0; t <= 40; ++t) {
    for (int n = 0; n < 4; ++n) {
      const double ovl = n == 1 ? 500.0 * std::clamp(t - from, 0.0, to - from) : 0;
      run.AddEvent(t + 0.01 * n, "counters",
                   {{"node", "n" + std::to_string(n)},
                    {"counters", {{"fab0.qdisc_overlimits", ovl}, {"fab0.tx_bytes", 1e9 * t}}}});
    }
  }
}

// A link degraded behind the drill's back in the recovery phase: an
// anomaly with its culprit; the drill's own fault is not one.
TEST(Anomalies, ASlowdownNoFaultExplainsIsFoundAndNamed) {
  SyntheticRun run = SyntheticRun::Standard();
  run.slow.push_back({.from_s = 27.0, .to_s = 33.0, .factor = 3.0, .culprit_node = "n0"});
  AddShaperCounters(run, 27, 33);
  Summary s = AnalyzeRun(run);
  ASSERT_EQ(s.anomalies.size(), 1u);
  const Anomaly& a = s.anomalies[0];
  EXPECT_NEAR(a.start_s, 27.0, 0.2);
  EXPECT_NEAR(a.end_s, 33.0, 0.3);
  EXPECT_GE(a.iterations, 10);
  ASSERT_TRUE(a.slowdown.has_value());
  EXPECT_NEAR(*a.slowdown, 3.0, 0.1);
  EXPECT_EQ(a.culprit.element, "link n1 fab0");
}

TEST(Anomalies, NoneInADrillWhoseOnlySlowdownIsItsFault) {
  SyntheticRun run = SyntheticRun::SlowN2(20.0);
  AddShaperCounters(run, 15, 20);
  Summary s = AnalyzeRun(run);
  EXPECT_TRUE(s.anomalies.empty());
  ASSERT_EQ(s.faults.size(), 1u);
  ASSERT_TRUE(s.faults[0].localisation.has_value());
  EXPECT_EQ(s.faults[0].localisation->element, "link n1 fab0");
}

// A slow stretch nothing can be named for (no counter, every rank alike) is
// the machine's noise: no anomaly.
TEST(Anomalies, ASlowStretchWithNoEvidenceIsNotAnAnomaly) {
  SyntheticRun run = SyntheticRun::Standard();
  run.slow.push_back({.from_s = 27.0, .to_s = 33.0, .factor = 3.0, .culprit_node = "none"});
  Summary s = AnalyzeRun(run);
  EXPECT_TRUE(s.anomalies.empty());
}

// A fault-free drill: no culprit anywhere, no anomaly.
TEST(Anomalies, AFaultFreeDrillHasNone) {
  SyntheticRun run = SyntheticRun::Standard();
  run.DropEvents("fault_apply");
  run.DropEvents("fault_applied");
  run.DropEvents("fault_revert");
  run.DropEvents("fault_reverted");
  AddShaperCounters(run, 100, 100);
  Summary s = AnalyzeRun(run);
  EXPECT_TRUE(s.anomalies.empty());
  EXPECT_TRUE(s.faults.empty());
}

// Issue 49: a burn-in's shape, one 40 s phase and no fault of its own, a
// link slowed behind its back for 6 s: the drill said pass, slowdown 1.0,
// no anomaly. With no phase named baseline the band is learned (its
// reference counts only the iterations inside the band), anomalies are
// looked for inside it against a rolling band, and the phase's
// time-weighted slowdown shows the degradation.
TEST(Anomalies, ADegradationInADrillWithNoBaselinePhaseIsFoundAndNamed) {
  SyntheticRun run = SyntheticRun::Standard();
  for (const char* type : {"fault_apply", "fault_applied", "fault_revert", "fault_reverted",
                           "phase_start", "phase_end"}) {
    run.DropEvents(type);
  }
  run.AddEvent(0.5, "phase_start", {{"phase", "soak"}});
  run.AddEvent(run.end_s + 0.5, "phase_end", {{"phase", "soak"}});
  run.slow.push_back({.from_s = 22.0, .to_s = 28.0, .factor = 3.0, .culprit_node = "n0"});
  AddShaperCounters(run, 22, 28);
  Summary s = AnalyzeRun(run);
  EXPECT_TRUE(s.baseline.learned);
  ASSERT_EQ(s.anomalies.size(), 1u) << "no anomaly in a one-phase drill";
  const Anomaly& a = s.anomalies[0];
  EXPECT_NEAR(a.start_s, 22.0, 0.2);
  EXPECT_NEAR(a.end_s, 28.0, 0.3);
  EXPECT_EQ(a.culprit.element, "link n1 fab0");
  ASSERT_TRUE(a.slowdown.has_value());
  EXPECT_NEAR(*a.slowdown, 3.0, 0.15);
  // The phase: 6 s of 40 at a third of the rate, time-weighted: 10 / 9.0.
  ASSERT_EQ(s.phases.size(), 1u);
  ASSERT_TRUE(s.phases[0].slowdown.has_value());
  EXPECT_NEAR(*s.phases[0].slowdown, 1.11, 0.03) << *s.phases[0].slowdown;
  // The reference is the healthy rate.
  EXPECT_NEAR(*s.baseline.busbw_mean, kBaselineGbps, 0.03 * kBaselineGbps);
}

// A live culprit names a switch port's fault when it names either end of
// the faulted cable (inventory.json's cabling); a neighbour's link does not.
TEST(Localise, ALiveCulpritAtTheFarEndOfTheFaultedCableNamesIt) {
  for (const auto& [node, link, names] : std::vector<std::tuple<std::string, std::string, bool>>{
           {"n2", "fab0", true}, {"sw", "swp2", true}, {"n1", "fab0", false}}) {
    SyntheticRun run = SyntheticRun::Standard();
    run.DropEvents("fault_apply");
    run.DropEvents("fault_applied");
    run.AddEvent(15.0, "fault_applied",
                 {{"id", "slow-link"},
                  {"kind", "link_rate"},
                  {"node", "sw"},
                  {"target", "swp2"},
                  {"verified", true}});
    run.AddEvent(16.5, "culprit",
                 {{"id", "slow-link"},
                  {"node", node},
                  {"link", link},
                  {"element", "link " + node + " " + link},
                  {"confidence", "high"},
                  {"evidence", nlohmann::json::array()}});
    TempDir dir;
    run.WriteTo(dir.path());
    std::ofstream(dir.path() / kInventoryFile) << R"({"nodes": [], "switches": [
      {"name": "sw", "role": "leaf", "ports": [
        {"name": "swp1", "to": "n1:fab0", "rate_bps": 1e10},
        {"name": "swp2", "to": "n2:fab0", "rate_bps": 1e10}]}]})";
    Result<RunData> data = LoadRunDir(dir.path().string());
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    const Summary s = Analyze(*data);
    ASSERT_EQ(s.faults.size(), 1u);
    EXPECT_EQ(s.faults[0].time_to_localise_s.has_value(), names) << node << " " << link;
    if (names) {
      EXPECT_NEAR(*s.faults[0].time_to_localise_s, 1.5, 1e-9);
    }
  }
}

// link_loss's own veth (fdrill<hash>, its peer down) drops what the fault
// loses: the fault's mechanism, neither evidence nor a link of the table
// (bench/localisation.sh named it before).
TEST(Localise, FdrillsOwnDevicesAreNeitherEvidenceNorLinks) {
  SyntheticRun run = SyntheticRun::SlowN2(20.0);
  for (int t = 0; t <= 40; ++t) {
    const double dropped = 400.0 * std::clamp(t - 15.0, 0.0, 5.0);
    run.AddEvent(
        t, "counters",
        {{"node", "n2"},
         {"counters", {{"fdrillab12cd34.tx_dropped", dropped}, {"fab0.tx_bytes", 1e9 * t}}}});
  }
  Summary s = AnalyzeRun(run);
  ASSERT_EQ(s.faults.size(), 1u);
  ASSERT_TRUE(s.faults[0].localisation.has_value());
  EXPECT_EQ(s.faults[0].localisation->element, "rank 2 (n2)");  // the line-up, not the veth
  for (const LinkStats& l : s.links) EXPECT_NE(l.link, "fdrillab12cd34");
  EXPECT_FALSE(s.links.empty());  // fab0 is still a link
}

}  // namespace
}  // namespace fdrill

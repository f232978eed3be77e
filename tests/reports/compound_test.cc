// Faults in force together (reports/compound.h): each named from its own
// evidence, its numbers from the time it alone was in force, the job's lost
// GPU·s counted once.
#include "reports/compound.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/brief.h"
#include "reports/json_report.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::AnalyzeRun;
using reports_test::SyntheticRun;

TEST(CompoundSpans, SubtractLeavesThePiecesNothingCovers) {
  const std::vector<Span> left = Subtract({10, 30}, {{5, 12}, {15, 18}, {17, 20}, {29, 40}});
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].from_s, 12);
  EXPECT_EQ(left[0].to_s, 15);
  EXPECT_EQ(left[1].from_s, 20);
  EXPECT_EQ(left[1].to_s, 29);
  EXPECT_TRUE(Subtract({10, 30}, {{0, 40}}).empty());
  ASSERT_EQ(Subtract({10, 30}, {}).size(), 1u);
  EXPECT_STREQ(EvidenceClass("rank"), "rank");
  EXPECT_STREQ(EvidenceClass("node"), "rank");
  EXPECT_STREQ(EvidenceClass("interface"), "link");
  EXPECT_STREQ(EvidenceClass("switch"), "link");
  EXPECT_STREQ(EvidenceClass(""), "");
}

// Standard's drill with its fault replaced by FAULTS: (id, kind, scope,
// node, target, applied, reverted).
struct Planned {
  std::string id, kind, scope, node, target;
  double applied = 0, reverted = 0;
};
SyntheticRun WithFaults(const std::vector<Planned>& faults) {
  SyntheticRun run = SyntheticRun::Standard();
  for (const char* type : {"fault_apply", "fault_applied", "fault_revert", "fault_reverted"})
    run.DropEvents(type);
  for (const Planned& f : faults) {
    run.AddEvent(f.applied, "fault_applied",
                 {{"id", f.id},
                  {"kind", f.kind},
                  {"scope", f.scope},
                  {"node", f.node},
                  {"target", f.target},
                  {"verified", true}});
    run.AddEvent(f.reverted, "fault_reverted",
                 {{"id", f.id}, {"node", f.node}, {"verified", true}});
  }
  return run;
}

// n1 fab0's shaper holding packets back from FROM to TO, every node
// sampled once a second.
void ShaperOnN1(SyntheticRun& run, double from, double to) {
  for (int t = 0; t <= 40; ++t) {
    for (int n = 0; n < 4; ++n) {
      const double held = n == 1 ? 500.0 * std::clamp(t - from, 0.0, to - from) : 0;
      run.AddEvent(t + 0.01 * n, "counters",
                   {{"node", "n" + std::to_string(n)},
                    {"counters", {{"fab0.qdisc_overlimits", held}, {"fab0.tx_bytes", 1e9 * t}}}});
    }
  }
}

double Sum(const Summary& s) {
  double total = 0;
  for (const FaultStats& f : s.faults) total += f.lost_gpu_s.value_or(0);
  for (const CompoundWindow& w : s.compound) total += w.lost_gpu_s.value_or(0);
  return total;
}

// The drill: an uplink shaped and a rank paused over the same five
// seconds. Before, both faults read the same slowdown and lost GPU·s
// (counted twice) and one culprit; now the link's fault is named from the
// link's counters, the pause from the line-up, and the window's GPU·s once.
TEST(Compound, TwoFaultsOfDifferentKindsAtOnceAreEachNamedFromTheirOwnEvidence) {
  SyntheticRun run = WithFaults({{"uplink", "link_rate", "interface", "n1", "fab0", 15, 20},
                                 {"pause", "rank_pause", "rank", "n2", "rank 2", 15, 20}});
  run.slow.push_back({.from_s = 15, .to_s = 20, .factor = 3, .culprit_node = "n2"});
  ShaperOnN1(run, 15, 20);
  const Summary s = AnalyzeRun(run);
  ASSERT_EQ(s.faults.size(), 2u);
  ASSERT_EQ(s.compound.size(), 1u);
  const CompoundWindow& w = s.compound[0];
  EXPECT_EQ(w.faults, (std::vector<std::string>{"uplink", "pause"}));
  EXPECT_NEAR(w.start_s, 15, 1e-9);
  EXPECT_NEAR(w.end_s, 20, 1e-9);
  ASSERT_TRUE(w.slowdown);
  EXPECT_NEAR(*w.slowdown, 3, 0.1);
  ASSERT_EQ(w.culprits.size(), 2u);
  EXPECT_EQ(w.culprits[0].element, "link n1 fab0");
  EXPECT_EQ(w.culprits[1].element, "rank 2 (n2)");

  const FaultStats& uplink = s.faults[0];
  const FaultStats& pause = s.faults[1];
  for (const FaultStats* f : {&uplink, &pause}) {
    EXPECT_EQ(f->measured_over, "compound") << f->id;
    EXPECT_EQ(f->alone_s, 0) << f->id;
    EXPECT_TRUE(f->applied_under_another) << f->id;
    EXPECT_FALSE(f->time_to_impact_s) << f->id;
  }
  EXPECT_EQ(uplink.overlapped_with, std::vector<std::string>{"pause"});
  ASSERT_TRUE(uplink.localisation);
  EXPECT_EQ(uplink.localisation->element, "link n1 fab0");
  ASSERT_TRUE(pause.localisation);
  EXPECT_EQ(pause.localisation->element, "rank 2 (n2)");
  EXPECT_EQ(pause.culprit_rank, 2);

  // One fault's worth of loss, once: 4 ranks x 5 s at a third of the rate.
  ASSERT_TRUE(s.lost_gpu_s);
  EXPECT_NEAR(*s.lost_gpu_s, 4 * 5.0 * 2 / 3, 0.6);
  EXPECT_NEAR(Sum(s), *s.lost_gpu_s, 1e-9);
  ASSERT_TRUE(w.lost_gpu_s);
  EXPECT_NEAR(*w.lost_gpu_s, *s.lost_gpu_s, 0.6);  // the in-force time is all shared

  // The paused rank's peers waited 60 of every 180 ms: half of the two
  // thirds the job lost; the rest is the link's.
  EXPECT_EQ(w.share_basis, "evidence");
  ASSERT_EQ(w.shares.size(), 2u);
  ASSERT_TRUE(w.shares[0].share && w.shares[1].share);
  EXPECT_NEAR(*w.shares[1].share, 0.5, 0.05);
  EXPECT_NEAR(*w.shares[0].share + *w.shares[1].share, 1, 1e-9);

  const nlohmann::json j = nlohmann::json::parse(RenderSummaryJson(s));
  ASSERT_EQ(j["compound_windows"].size(), 1u);
  EXPECT_EQ(j["compound_windows"][0]["faults"], nlohmann::json({"uplink", "pause"}));
  EXPECT_EQ(j["faults"][1]["measured_over"], "compound");
  EXPECT_EQ(j["faults"][1]["localisation"]["element"], "rank 2 (n2)");
  EXPECT_NEAR(j["lost_gpu_s"].get<double>(), *s.lost_gpu_s, 1e-3);
}

// report.md, report.html and the one-screen brief say which faults shared
// their time, and what each fault's numbers were measured over.
TEST(Compound, EveryRenderingSaysWhichFaultsWereInForceTogether) {
  SyntheticRun run = WithFaults({{"uplink", "link_rate", "interface", "n1", "fab0", 15, 20},
                                 {"pause", "rank_pause", "rank", "n2", "rank 2", 15, 20}});
  run.slow.push_back({.from_s = 15, .to_s = 20, .factor = 3, .culprit_node = "n2"});
  ShaperOnN1(run, 15, 20);
  reports_test::TempDir dir;
  Result<Summary> s = reports_test::WriteWithReports(run, dir.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const std::string md = reports_test::ReadText(dir.path() / "report.md");
  EXPECT_NE(md.find("Faults in force together"), std::string::npos);
  EXPECT_NE(md.find("| uplink, pause |"), std::string::npos) << md;
  EXPECT_NE(md.find("Lost GPU·s in all, each second once"), std::string::npos);
  const std::string html = reports_test::ReadText(dir.path() / "report.html");
  EXPECT_NE(html.find("Faults in force together"), std::string::npos);
  EXPECT_NE(html.find("shared"), std::string::npos);
  const std::string brief = BriefText(*s, dir.path().string());
  EXPECT_NE(brief.find("in force together 15.0-20.0 s: uplink + pause"), std::string::npos)
      << brief;
  EXPECT_NE(brief.find("x shared"), std::string::npos) << brief;
}

// Staggered: each fault has five seconds alone, measured there; the five
// they share are the window's, split by what each cost alone.
TEST(Compound, StaggeredFaultsAreMeasuredOverTheTimeEachWasAlone) {
  SyntheticRun run = WithFaults({{"uplink", "link_rate", "interface", "n1", "fab0", 15, 25},
                                 {"pause", "rank_pause", "rank", "n2", "rank 2", 20, 30}});
  run.slow.push_back({.from_s = 15, .to_s = 20, .factor = 2, .culprit_node = "none"});
  run.slow.push_back({.from_s = 20, .to_s = 25, .factor = 4, .culprit_node = "n2"});
  run.slow.push_back({.from_s = 25, .to_s = 30, .factor = 2, .culprit_node = "n2"});
  ShaperOnN1(run, 15, 25);
  const Summary s = AnalyzeRun(run);
  ASSERT_EQ(s.faults.size(), 2u);
  const FaultStats& uplink = s.faults[0];
  const FaultStats& pause = s.faults[1];
  EXPECT_EQ(uplink.measured_over, "alone");
  EXPECT_NEAR(*uplink.alone_s, 5, 1e-9);
  ASSERT_TRUE(uplink.slowdown);
  EXPECT_NEAR(*uplink.slowdown, 2, 0.1);  // not the 4x of the shared seconds
  ASSERT_TRUE(uplink.localisation);
  EXPECT_EQ(uplink.localisation->element, "link n1 fab0");
  EXPECT_TRUE(uplink.reverted_under_another);
  EXPECT_TRUE(uplink.time_to_impact_s);

  EXPECT_EQ(pause.measured_over, "alone");
  ASSERT_TRUE(pause.slowdown);
  EXPECT_NEAR(*pause.slowdown, 2, 0.1);
  ASSERT_TRUE(pause.localisation);
  EXPECT_EQ(pause.localisation->element, "rank 2 (n2)");
  EXPECT_TRUE(pause.applied_under_another);
  EXPECT_FALSE(pause.time_to_impact_s);  // the job was already slow at its apply

  ASSERT_EQ(s.compound.size(), 1u);
  const CompoundWindow& w = s.compound[0];
  EXPECT_NEAR(w.start_s, 20, 1e-9);
  EXPECT_NEAR(w.end_s, 25, 1e-9);
  ASSERT_TRUE(w.slowdown);
  EXPECT_NEAR(*w.slowdown, 4, 0.15);
  EXPECT_EQ(w.share_basis, "alone");
  EXPECT_NEAR(*w.shares[0].share, 0.5, 0.05);

  // 5 s at half the rate, 5 s at a quarter, 5 s at half: 4 x (2.5 + 3.75
  // + 2.5), each second in one place only.
  ASSERT_TRUE(uplink.lost_gpu_s && pause.lost_gpu_s && w.lost_gpu_s);
  EXPECT_NEAR(*uplink.lost_gpu_s, 4 * 2.5, 0.5);
  EXPECT_NEAR(*w.lost_gpu_s, 4 * 3.75, 0.5);
  EXPECT_NEAR(*pause.lost_gpu_s, 4 * 2.5, 0.6);
  EXPECT_NEAR(*s.lost_gpu_s, 4 * 8.75, 1.2);
  EXPECT_NEAR(Sum(s), *s.lost_gpu_s, 1e-9);
}

// Two link faults never alone: the window names the links, but no fault
// takes a culprit the evidence cannot give it.
TEST(Compound, TwoFaultsOfOneClassNeverAloneTakeNoCulpritTheyCannotBeToldApartBy) {
  SyntheticRun run = WithFaults({{"a", "link_rate", "interface", "n1", "fab0", 15, 20},
                                 {"b", "link_loss", "interface", "n3", "fab0", 15, 20}});
  run.slow.push_back({.from_s = 15, .to_s = 20, .factor = 3, .culprit_node = "none"});
  ShaperOnN1(run, 15, 20);
  const Summary s = AnalyzeRun(run);
  ASSERT_EQ(s.compound.size(), 1u);
  ASSERT_FALSE(s.compound[0].culprits.empty());
  EXPECT_EQ(s.compound[0].culprits[0].element, "link n1 fab0");
  EXPECT_TRUE(s.compound[0].share_basis.empty());
  for (const FaultStats& f : s.faults) {
    EXPECT_EQ(f.measured_over, "compound");
    EXPECT_FALSE(f.localisation) << f.id;
  }
}

// A fault applied after another was reverted overlaps nothing: it keeps
// its own window, and no compound window is made.
TEST(Compound, FaultsOneAfterAnotherAreNotCompound) {
  SyntheticRun run = WithFaults({{"a", "link_rate", "interface", "n1", "fab0", 15, 20},
                                 {"b", "rank_pause", "rank", "n2", "rank 2", 20, 25}});
  run.slow.push_back({.from_s = 15, .to_s = 25, .factor = 3, .culprit_node = "n2"});
  const Summary s = AnalyzeRun(run);
  EXPECT_TRUE(s.compound.empty());
  for (const FaultStats& f : s.faults) {
    EXPECT_EQ(f.measured_over, "window");
    EXPECT_TRUE(f.overlapped_with.empty());
  }
}

}  // namespace
}  // namespace fdrill

// AddDetectors: fdrill's live localisation against NCCL RAS, per fault.
#include "reports/detectors.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

Event Ras(double t, const std::string& node, bool answered, int64_t missing = 0, int64_t dead = 0) {
  Event e;
  e.t = t;
  e.type = "ras";
  e.node = node;
  e.answered = answered;
  if (answered) {
    e.ras_missing = missing;
    e.ras_dead = dead;
  } else {
    e.message = "connection refused";
  }
  return e;
}

std::vector<FaultStats> KillThenFlap() {
  FaultStats a{.id = "kill", .kind = "rank_kill", .node = "n2", .applied_at_s = 20};
  a.time_to_localise_s = 1.5;
  a.localisation = Culprit{.element = "rank 2 (n2)"};
  FaultStats b{.id = "flap", .kind = "link_flap", .node = "n1", .applied_at_s = 100};
  b.time_to_impact_s = 0.3;
  return {a, b};
}

TEST(Detectors, WithoutARasWatchOnlyFdrillIsListed) {
  auto faults = KillThenFlap();
  AddDetectors({}, &faults);
  ASSERT_EQ(faults[0].detectors.size(), 1u);
  EXPECT_EQ(faults[0].detectors[0].detector, "fdrill");
  EXPECT_EQ(faults[0].detectors[0].after_s, 1.5);
  EXPECT_EQ(faults[0].detectors[0].what, "named rank 2 (n2) live");
  EXPECT_EQ(faults[0].first_detector, "fdrill");
  EXPECT_EQ(faults[1].detectors[0].what, "impact in the iteration times");
}

TEST(Detectors, RasCountsForTheFaultBeforeItAndSaysWhatItSaw) {
  auto faults = KillThenFlap();
  // Healthy from the start; n2's RAS stops answering 0.9 s after the kill
  // (its process is gone), n0's says one process missing later; nothing
  // after the flap until the dead declaration, which belongs to the flap.
  std::vector<Event> events = {Ras(1, "n0", true), Ras(1, "n2", true), Ras(20.9, "n2", false),
                               Ras(25, "n0", true, 1), Ras(130, "n0", true, 0, 1)};
  AddDetectors(events, &faults);
  ASSERT_EQ(faults[0].detectors.size(), 2u);
  const Detection& ras = faults[0].detectors[1];
  EXPECT_EQ(ras.detector, "nccl_ras");
  ASSERT_TRUE(ras.after_s);
  EXPECT_NEAR(*ras.after_s, 0.9, 1e-9);
  EXPECT_EQ(ras.what, "RAS on n2 stopped answering (connection refused)");
  EXPECT_EQ(faults[0].first_detector, "nccl_ras");
  const Detection& flap = faults[1].detectors[1];
  ASSERT_TRUE(flap.after_s);
  EXPECT_NEAR(*flap.after_s, 30, 1e-9);
  EXPECT_EQ(flap.what, "RAS on n0: 1 process dead");
  EXPECT_EQ(faults[1].first_detector, "fdrill");
}

TEST(Detectors, ANodeWhereRasNeverAnsweredIsNotEvidence) {
  auto faults = KillThenFlap();
  // n3 runs no NCCL process with RAS (or RAS is off there): its refusals
  // from the start say nothing about a fault.
  AddDetectors({Ras(1, "n3", false), Ras(21, "n3", false)}, &faults);
  ASSERT_EQ(faults[0].detectors.size(), 2u);
  EXPECT_FALSE(faults[0].detectors[1].after_s);
  EXPECT_EQ(faults[0].first_detector, "fdrill");
}

}  // namespace
}  // namespace fdrill

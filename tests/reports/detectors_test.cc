// AddDetectors: fdrill's live localisation against NCCL RAS, per fault.
#include "reports/detectors.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "tests/reports/synthetic_run.h"

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

Event IbAsync(double t, const std::string& node, int port, const std::string& event) {
  Event e;
  e.t = t;
  e.type = "ib_async";
  e.node = node;
  e.device = "mlx5_0";
  e.port = port;
  e.ib_event = event;
  return e;
}

Event IbWatch(const std::string& node, int64_t devices) {
  Event e;
  e.type = "ib_watch";
  e.node = node;
  e.ib_devices = devices;
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

TEST(Detectors, TheHcasPortErrCountsForTheFaultItFollows) {
  auto faults = KillThenFlap();
  // n1's HCA: its port leaves ACTIVE 0.2 s into the flap and comes back;
  // a PORT_ACTIVE says nothing went wrong, so it is never the detection.
  AddDetectors({IbWatch("n1", 1), IbAsync(21, "n1", 1, "PORT_ACTIVE"),
                IbAsync(100.2, "n1", 1, "PORT_ERR"), IbAsync(103, "n1", 1, "PORT_ACTIVE")},
               &faults);
  ASSERT_EQ(faults[0].detectors.size(), 2u) << "fdrill and ib_async, no RAS watch";
  EXPECT_EQ(faults[0].detectors[1].detector, "ib_async");
  EXPECT_FALSE(faults[0].detectors[1].after_s) << "a PORT_ACTIVE is not a detection";
  const Detection& ib = faults[1].detectors[1];
  EXPECT_EQ(ib.detector, "ib_async");
  ASSERT_TRUE(ib.after_s);
  EXPECT_NEAR(*ib.after_s, 0.2, 1e-9);
  EXPECT_EQ(ib.what, "n1 mlx5_0 port 1: PORT_ERR");
  EXPECT_EQ(faults[1].first_detector, "ib_async") << "0.2 s, before fdrill's 0.3 s";
}

TEST(Detectors, IbAsyncIsListedOnlyWhereSomeAgentListened) {
  auto faults = KillThenFlap();
  // Every node answered ib_watch with no devices: no ib_watch event at all
  // (the controller records none), or one that could not open them.
  Event refused;
  refused.type = "ib_watch";
  refused.node = "n0";
  refused.message = "ibv_open_device mlx5_0: Permission denied";
  AddDetectors({refused}, &faults);
  ASSERT_EQ(faults[1].detectors.size(), 1u);
  EXPECT_EQ(faults[1].detectors[0].detector, "fdrill");

  // Listening, and a device event names no port.
  faults = KillThenFlap();
  AddDetectors({IbWatch("n2", 2), IbAsync(20.5, "n2", 0, "DEVICE_FATAL")}, &faults);
  ASSERT_EQ(faults[0].detectors.size(), 2u);
  EXPECT_EQ(faults[0].detectors[1].what, "n2 mlx5_0: DEVICE_FATAL");
  EXPECT_FALSE(faults[1].detectors[1].after_s) << "before the flap: the kill's, not the flap's";
}

TEST(Detectors, TheRunsIbEventsReachTheSummarysDetectors) {
  // As the controller writes them (docs/reference/formats.md): n2's agent listened to
  // mlx5_0; its port 1 left ACTIVE 0.25 s after the fault's apply at 15 s.
  auto run = reports_test::SyntheticRun::Standard();
  run.AddEvent(1.0, "ib_watch",
               {{"node", "n2"},
                {"devices", nlohmann::json::array(
                                {{{"name", "mlx5_0"}, {"ports", nlohmann::json::array()}}})}});
  run.AddEvent(15.25, "ib_async",
               {{"node", "n2"},
                {"device", "mlx5_0"},
                {"port", 1},
                {"event", "PORT_ERR"},
                {"wall_ns", 1700000000000000000}});
  const Summary s = reports_test::AnalyzeRun(run);
  ASSERT_EQ(s.faults.size(), 1u);
  const auto& d = s.faults[0].detectors;
  auto ib =
      std::find_if(d.begin(), d.end(), [](const Detection& x) { return x.detector == "ib_async"; });
  ASSERT_NE(ib, d.end()) << "no ib_async detector";
  ASSERT_TRUE(ib->after_s);
  EXPECT_NEAR(*ib->after_s, 0.25, 1e-9);
  EXPECT_EQ(ib->what, "n2 mlx5_0 port 1: PORT_ERR");
}

}  // namespace
}  // namespace fdrill

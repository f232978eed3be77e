#include "harness/controller/recorder.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/wire/counter_samples.h"
#include "harness/controller/drill_events.h"
#include "reports/run_dir.h"
#include "tests/fakes/fake_clock.h"

namespace fdrill {
namespace {

TEST(RunRecorder, StampsEventsAndMapsMetricsThroughTheAgentOffset) {
  auto dir = std::filesystem::temp_directory_path() / ("fdrill-rec-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  FakeClock clock;
  int64_t start_wall = clock.WallNanos();
  auto rec = RunRecorder::Create(dir.string(), clock);
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  clock.Advance(std::chrono::milliseconds(1500));
  EXPECT_DOUBLE_EQ((*rec)->Event("phase_start", {{"phase", "baseline"}}), 1.5);
  // The agent's clock runs 250 ms ahead of ours: a record stamped at our
  // start + 2.25 s reads start + 2.5 s on the agent.
  int64_t offset = 250'000'000;
  Json records = Json::array(
      {{{"rank", 1}, {"wall_ns", start_wall + 2'500'000'000}, {"iter", 0}}, {{"no", "wall"}}});
  EXPECT_EQ((*rec)->Metrics("n1", records, offset), 1u);
  std::ifstream ev(dir / "events.jsonl"), me(dir / "metrics.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(ev, line));
  EXPECT_EQ(Json::parse(line)["type"], "phase_start");
  ASSERT_TRUE(std::getline(me, line));
  Json m = Json::parse(line);
  EXPECT_EQ(m["node"], "n1");
  EXPECT_NEAR(m["t"].get<double>(), 2.25, 1e-9);
  EXPECT_FALSE(RunRecorder::Create(dir.string(), clock).ok())
      << "a non-empty run directory is refused";
  std::filesystem::remove_all(dir);
}

// Issue 21: a lost agent's events, and the sweep's time on the run's clock.
TEST(DrillEvents, AgentLostAndFaultsSweptSayWhatWasLeftAndWhenTheSweepRevertedIt) {
  auto dir = std::filesystem::temp_directory_path() / ("fdrill-ev-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  FakeClock clock;
  const int64_t start_wall = clock.WallNanos();
  auto rec = RunRecorder::Create(dir.string(), clock);
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  DrillEvents events;
  events.AgentLost("n1", "before attach: not written", {"cap"}, start_wall);
  events.Attach(rec->get());
  clock.Advance(std::chrono::seconds(10));
  events.AgentLost("n1", "lost the agent: End of file", {"cap"}, clock.WallNanos());
  events.FaultsSwept("n1", {"cap"}, start_wall + 11'500'000'000);
  std::ifstream ev(dir / "events.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(ev, line));
  Json lost = Json::parse(line);
  EXPECT_EQ(lost["type"], "agent_lost");
  EXPECT_EQ(lost["reason"], "lost the agent: End of file");
  EXPECT_EQ(lost["faults_left"], Json::array({"cap"}));
  EXPECT_EQ(lost["wall_ns"], start_wall + 10'000'000'000);
  ASSERT_TRUE(std::getline(ev, line));
  Json swept = Json::parse(line);
  EXPECT_EQ(swept["type"], "faults_swept");
  EXPECT_EQ(swept["ids"], Json::array({"cap"}));
  EXPECT_NEAR(swept["at_s"].get<double>(), 11.5, 1e-9);
  EXPECT_FALSE(std::getline(ev, line)) << line;
  std::filesystem::remove_all(dir);
}

// events.jsonl holds each node's first counters sample of the run whole,
// then the pushes as they came (mostly deltas); the report's reader makes
// every one whole again.
TEST(DrillEvents, CountersAreWrittenWholeFirstThenAsPushedAndReadBackWhole) {
  auto dir = std::filesystem::temp_directory_path() / ("fdrill-ct-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  FakeClock clock;
  auto rec = RunRecorder::Create(dir.string(), clock);
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  DrillEvents events;
  CounterSamples samples;                            // the controller's end of the pushes
  std::vector<std::pair<std::string, Json>> wholes;  // what the reader must give back
  auto push = [&](const std::string& node, Json counters, bool delta) {
    Json msg = {{"type", "counters"}, {"node", node}, {"counters", std::move(counters)}};
    if (delta) msg["delta"] = true;
    auto whole = samples.Apply(node, msg);
    ASSERT_TRUE(whole);
    if (events.attached()) wholes.emplace_back(node, *whole);
    events.Counters(node, *whole, msg);
  };
  push("n1", {{"a", 1}, {"b", 0}}, false);  // before the run directory: not written
  events.Attach(rec->get());
  push("n1", {{"a", 2}}, true);  // n1's first in the file: whole
  push("n2", {{"a", 7}}, false);
  push("n1", {{"a", 3}}, true);
  push("n1", Json::object(), true);
  push("n2", {{"c", 1}}, true);
  push("n1", {{"a", 4}}, false);  // a whole one (every 10th push)
  push("n1", {{"b", 5}}, true);

  std::ifstream ev(dir / "events.jsonl");
  std::vector<Event> read;
  std::vector<bool> written_delta;
  for (std::string line; std::getline(ev, line);) {
    written_delta.push_back(Json::parse(line).value("delta", false));
    auto e = ParseEventLine(line, "events.jsonl");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    read.push_back(*e);
  }
  EXPECT_EQ(written_delta, (std::vector<bool>{false, false, true, true, true, false, true}));
  MakeCountersWhole(&read);
  ASSERT_EQ(read.size(), wholes.size());
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].node, wholes[i].first);
    Json got = Json::object();
    for (const auto& [name, value] : read[i].counters) got[name] = value;
    EXPECT_EQ(got, wholes[i].second) << "event " << i;
    EXPECT_FALSE(read[i].counters_delta);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdrill

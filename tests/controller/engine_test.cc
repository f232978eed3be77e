// The timeline engine driven by a fake clock: no sleeps, no agents.
#include "harness/controller/engine.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_clock.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

FaultSpec Fault(const std::string& id, Duration at = {}, Duration length = {}) {
  FaultSpec f;
  f.id = id;
  f.kind = "link_rate";
  f.node = "n1";
  f.params = Json::object();
  f.at = at;
  f.length = length;
  return f;
}

PhaseSpec Phase(const std::string& name, Duration d, std::vector<FaultSpec> faults = {}) {
  PhaseSpec p;
  p.name = name;
  p.duration = d;
  p.faults = std::move(faults);
  return p;
}

PhaseSpec Gate(const std::string& name, Duration min, Duration timeout, bool abort = true) {
  PhaseSpec p = Phase(name, min);
  p.gate = GateSpec{timeout, abort};
  return p;
}

// Drives the engine on a fake clock in `step` increments; records
// "<seconds>:<kind>[:<fault id>]" for every action.
class Driver {
 public:
  explicit Driver(const Scenario& s) : s_(s), engine_(s), t0_(clock_.Now()) {}

  void RunUntil(Duration end, Duration step = milliseconds(100)) {
    while (!engine_.Finished() && Now() <= end) {
      Take(engine_.Advance(Now(), input));
      clock_.Advance(step);
    }
  }
  void Take(const std::vector<Action>& actions) {
    for (const auto& a : actions) {
      std::string line =
          std::to_string(std::chrono::duration_cast<milliseconds>(a.at).count() / 1000.0)
              .substr(0, 4) +
          ":" + ActionKindName(a.kind);
      if (a.fault >= 0) line += ":" + s_.phases[a.phase].faults[a.fault].id;
      log.push_back(line);
      reasons.push_back(a.reason);
    }
  }
  Duration Now() const { return clock_.Now() - t0_; }

  EngineInput input;
  std::vector<std::string> log;
  std::vector<std::string> reasons;
  DrillEngine& engine() { return engine_; }
  FakeClock& clock() { return clock_; }

 private:
  const Scenario& s_;
  DrillEngine engine_;
  FakeClock clock_;
  Clock::TimePoint t0_;
};

Scenario Basic() {
  Scenario s;
  s.nodes = 2;
  s.phases = {Phase("baseline", seconds(10)),
              Phase("hit", seconds(5), {Fault("a"), Fault("b", seconds(1), seconds(2))}),
              Phase("recovery", seconds(10))};
  return s;
}

TEST(DrillEngine, FixedPhasesAndWindowsInSafeOrder) {
  Scenario s = Basic();
  Driver d(s);
  d.RunUntil(seconds(30));
  EXPECT_EQ(d.log, (std::vector<std::string>{"0.00:phase_start", "10.0:phase_end",
                                             "10.0:phase_start", "10.0:apply:a", "11.0:apply:b",
                                             "13.0:revert:b", "15.0:revert:a", "15.0:phase_end",
                                             "15.0:phase_start", "25.0:phase_end", "25.0:done"}));
  EXPECT_TRUE(d.engine().Finished());
  EXPECT_EQ(d.reasons[1], "its duration elapsed (10s)");
  EXPECT_EQ(d.reasons[5], "its window ended (2s)");
  EXPECT_EQ(d.reasons[6], "its phase ended");
}

TEST(DrillEngine, ALateCallStillEmitsEverythingInTimeOrder) {
  Scenario s = Basic();
  DrillEngine e(s);
  std::vector<std::string> kinds;
  for (const auto& a : e.Advance(seconds(40), {})) kinds.push_back(ActionKindName(a.kind));
  EXPECT_EQ(kinds, (std::vector<std::string>{"phase_start", "phase_end", "phase_start", "apply",
                                             "apply", "revert", "revert", "phase_end",
                                             "phase_start", "phase_end", "done"}));
  EXPECT_TRUE(e.Advance(seconds(41), {}).empty());  // nothing after done
}

TEST(DrillEngine, NextDeadlineIsTheNextTimedTransition) {
  Scenario s = Basic();
  DrillEngine e(s);
  EXPECT_EQ(e.NextDeadline(), Duration{});
  e.Advance(Duration{}, {});
  EXPECT_EQ(e.NextDeadline(), seconds(10));
  e.Advance(seconds(10), {});
  EXPECT_EQ(e.NextDeadline(), seconds(11));
  e.Advance(seconds(11), {});
  EXPECT_EQ(e.NextDeadline(), seconds(13));
}

TEST(DrillEngine, StopConditionRevertsEverythingThenAborts) {
  Scenario s = Basic();
  Driver d(s);
  d.RunUntil(milliseconds(11500));
  d.input.stop = "stop condition min_busbw: busbw below 1 GB/s for 3 iterations in a row";
  d.RunUntil(seconds(30));
  ASSERT_GE(d.log.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(d.log.end() - 3, d.log.end()),
            (std::vector<std::string>{"11.6:revert:a", "11.6:revert:b", "11.6:abort"}));
  EXPECT_EQ(d.reasons.back(), *d.input.stop);
  EXPECT_TRUE(d.engine().Finished());
  EXPECT_FALSE(d.engine().NextDeadline().has_value());
}

TEST(DrillEngine, CtrlCAbortRevertsWhatIsApplied) {
  Scenario s = Basic();
  Driver d(s);
  d.RunUntil(milliseconds(10500));
  d.Take(d.engine().Abort(d.Now(), "interrupted (SIGINT/SIGTERM)"));
  EXPECT_EQ(std::vector<std::string>(d.log.end() - 2, d.log.end()),
            (std::vector<std::string>{"10.6:revert:a", "10.6:abort"}));
  EXPECT_TRUE(d.engine().Abort(d.Now(), "again").empty());
}

Scenario Gated(bool abort) {
  Scenario s;
  s.nodes = 2;
  s.phases = {Phase("baseline", seconds(5)), Phase("hit", seconds(2), {Fault("a")}),
              Gate("settle", seconds(1), seconds(20), abort), Phase("recovery", seconds(3))};
  return s;
}

TEST(DrillEngine, GateEndsWhenStableInsideIt) {
  Scenario s = Gated(true);
  Driver d(s);
  // Stable since before the gate began: that window does not count.
  d.input.stable_since = seconds(1);
  d.RunUntil(seconds(12));
  EXPECT_EQ(d.engine().phase(), 2);
  d.input.stable_since = seconds(11);
  d.RunUntil(seconds(30));
  EXPECT_EQ(d.log, (std::vector<std::string>{"0.00:phase_start", "5.00:phase_end",
                                             "5.00:phase_start", "5.00:apply:a", "7.00:revert:a",
                                             "7.00:phase_end", "7.00:phase_start", "12.1:phase_end",
                                             "12.1:phase_start", "15.1:phase_end", "15.1:done"}));
  EXPECT_EQ(d.reasons[7], "stable: 5 iterations in a row in the baseline band");
}

TEST(DrillEngine, GateHonoursItsMinimumDuration) {
  Scenario s = Gated(true);
  Driver d(s);
  d.input.stable_since = seconds(7);  // stable the moment the gate opens
  d.RunUntil(seconds(30));
  EXPECT_EQ(d.log[7], "8.00:phase_end");  // 7 s + the 1 s minimum
}

TEST(DrillEngine, GateTimeoutAbortsOrContinues) {
  Scenario s = Gated(true);
  Driver d(s);
  d.RunUntil(seconds(60));
  EXPECT_EQ(d.log.back(), "27.0:abort");
  EXPECT_EQ(d.reasons.back(), "phase settle was not stable within its timeout 20s");
  Scenario c = Gated(false);
  Driver go(c);
  go.RunUntil(seconds(60));
  EXPECT_EQ(go.log[7], "27.0:phase_end");
  EXPECT_EQ(go.log.back(), "30.0:done");
}

}  // namespace
}  // namespace fdrill

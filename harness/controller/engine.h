// DrillEngine: the timeline as a pure state machine. The caller feeds it the
// time since the timeline started and what the live monitor says; it returns
// the transitions due, in order, each with its reason. No clocks, no I/O:
// tests drive it with a fake clock (tests/controller/engine_test.cc).
//
// Contracts:
//  - phases run in order; a fixed phase ends after its duration; a gated
//    phase (until: stable) ends once it has run its minimum duration and the
//    monitor reports a stable window that began inside it, or at its timeout
//    (abort, or go on when on_timeout: continue);
//  - a fault is applied `at` after its phase starts and reverted after its
//    length, or at the phase's end; at one instant reverts come first, then
//    phase_end, phase_start, applies (a phase ends once its faults are off);
//  - a stop condition or Abort() reverts every applied fault, then emits
//    kAbort; nothing is emitted after kAbort or kDone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/scenario/scenario.h"

namespace fdrill {

struct EngineInput {
  std::optional<Duration> stable_since;  // LiveMonitor::StableSince
  std::optional<std::string> stop;       // LiveMonitor::StopReason
};

struct Action {
  enum Kind { kRevert, kPhaseEnd, kPhaseStart, kApply, kAbort, kDone };
  Kind kind = kPhaseStart;
  int phase = -1;
  int fault = -1;      // index in the phase's faults for kApply / kRevert
  Duration at{};       // when it was due on the timeline
  std::string reason;  // why now
};

const char* ActionKindName(Action::Kind kind);

class DrillEngine {
 public:
  explicit DrillEngine(const Scenario& scenario);

  // Every transition due at `now` (non-decreasing between calls).
  std::vector<Action> Advance(Duration now, const EngineInput& input);
  // Reverts what is applied and ends the drill (Ctrl-C, a lost agent).
  std::vector<Action> Abort(Duration now, const std::string& reason);

  // The next time Advance has a timed transition; nullopt once finished.
  // A gate may end earlier, when the monitor turns stable.
  std::optional<Duration> NextDeadline() const;
  bool Finished() const { return finished_; }
  int phase() const { return phase_; }

 private:
  struct FaultState {
    bool applied = false;
    bool reverted = false;
  };
  Duration FaultStart(int f) const;
  std::optional<Duration> FaultEnd(int f) const;  // nullopt: the phase's end
  void StartPhase(int p, Duration at, std::vector<Action>* out);
  void RevertApplied(Duration now, const std::string& reason, std::vector<Action>* out);

  const Scenario& s_;
  int phase_ = -1;
  Duration phase_start_{};
  std::vector<FaultState> faults_;  // of the current phase
  bool finished_ = false;
  Duration last_now_{};
};

}  // namespace fdrill

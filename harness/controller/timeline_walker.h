// TimelineWalker: step 4 of a drill (drill.h) — walks the scenario's
// timeline on the controller thread. Each turn (at most 20 ms apart, or at
// the engine's next deadline) it reads the live monitors and each
// workload's health, lets its supervisor act on a failed or hung job, asks the pure
// DrillEngine for what is due, and carries the actions out on the agents:
// apply and revert each fault, with the events around every call (through
// DrillEvents). It records when a fault's impact first shows live — looked
// for between turns too, as records arrive and when a silence would show it
// (ImpactWatch) — and draws the progress line.
//
// Contract: Walk returns when the timeline is done, was aborted (Ctrl-C,
// the job ended, a stop condition, a gate's timeout), or the drill failed
// (a lost agent, a failed apply or revert: DrillState::failed). Whatever
// it returns with, the faults still in force are exactly those
// RevertInForce reverts: a fault counts as in force from just before its
// apply call until its revert succeeded.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/core/clock.h"
#include "harness/controller/drill_context.h"
#include "harness/controller/drill_events.h"
#include "harness/controller/drill_state.h"
#include "harness/controller/engine.h"
#include "harness/controller/impact_watch.h"
#include "harness/controller/workload_supervisor.h"
#include "harness/scenario/scenario.h"

namespace fdrill {

struct DrillOptions;

class TimelineWalker {
 public:
  TimelineWalker(const DrillContext& ctx,
                 std::vector<std::unique_ptr<WorkloadSupervisor>>& workloads);

  void Walk();
  // Step 5 starts here: every fault still in force, reverted ("drill ending").
  void RevertInForce();
  // The faults in force on `node`, by id (any thread).
  std::vector<std::string> InForceOn(const std::string& node) const;
  // `ids` on `node` were reverted by its restarted agent's journal sweep:
  // no longer in force, and RevertInForce leaves them alone (any thread).
  void Swept(const std::string& node, const std::vector<std::string>& ids);

  bool job_ended() const { return job_ended_; }  // the workload ended the timeline
  bool stopped() const { return stopped_; }      // a stop condition or a gate's timeout did
  bool abort_recorded() const { return abort_recorded_; }

 private:
  // Carries out one engine action; false when the drill must end (an apply or
  // revert failed: RevertInForce reverts the rest).
  bool Execute(const Action& a);
  // Faults due at the same moment, applied (reverted) on their agents at
  // once; false when any failed (the others still are, or are no longer,
  // in force as their agents said).
  bool Apply(const std::vector<const Action*>& batch);
  bool Revert(const std::vector<const Action*>& batch);
  const FaultSpec& FaultOf(const Action& a) const;
  // Impact seen live (ImpactWatch::Look; docs/performance.md: detection
  // latency), each an impact_seen event.
  void RecordImpactsLocked(Duration at);
  // Sleeps until `wake` (or an abort, or the job's exit), looking for
  // impact on each batch of records that arrives and at ImpactWatch's
  // NextLook meanwhile.
  void WaitForTurn(Clock::TimePoint t0, Clock::TimePoint wake);
  void ShowProgress(Duration now);
  // Every workload's live view together: stable once all are (since the
  // latest of them), the first stop condition any meets.
  std::optional<Duration> StableSinceLocked() const;
  std::optional<std::string> StopReasonLocked(Duration now) const;
  bool AnyExitedLocked() const;
  // Launches the tenants that arrive with PHASE (workloads.NAME.start);
  // false when one could not be (the drill fails).
  bool StartArrivals(const std::string& phase);

  const Scenario& s_;
  const DrillOptions& opt_;
  const Clock& clock_;
  DrillState& state_;
  AgentCalls& agents_;
  DrillEvents& events_;
  std::vector<std::unique_ptr<WorkloadSupervisor>>& workloads_;
  // The drill's length (at most, when gated): fixed, so not re-summed over
  // every phase at each 20 ms turn of the timeline loop.
  const Duration total_;
  const bool gated_;

  std::map<std::string, std::string> applied_;  // fault id -> node, while in force (state_.mu)
  // Faults applied whose impact the live view has not shown yet (state_.mu).
  ImpactWatch impacts_;
  std::string current_phase_;  // for the progress line
  bool job_ended_ = false;
  bool stopped_ = false;
  bool abort_recorded_ = false;
};

}  // namespace fdrill

#include "harness/controller/timeline_walker.h"

#include <algorithm>

#include "harness/controller/drill.h"
#include "harness/controller/progress.h"
#include "harness/wire/protocol.h"

namespace fdrill {

TimelineWalker::TimelineWalker(const Scenario& s, const DrillOptions& opt, const Clock& clock,
                               DrillState& state, DrillAgents& agents, DrillEvents& events,
                               WorkloadSupervisor& workload)
    : s_(s),
      opt_(opt),
      clock_(clock),
      state_(state),
      agents_(agents),
      events_(events),
      workload_(workload),
      total_(s.TotalDuration()),
      gated_(std::any_of(s.phases.begin(), s.phases.end(),
                         [](const PhaseSpec& p) { return p.gate.has_value(); })) {}

void TimelineWalker::Walk() {
  DrillEngine engine(s_);
  const auto t0 = clock_.Now();
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    state_.t0_wall_ns = clock_.WallNanos();
    state_.monitor = std::make_unique<LiveMonitor>(std::max(1, workload_.ReportingRanks()), s_.stop,
                                                   s_.recovery_window_iters);
  }
  while (!engine.Finished()) {
    const Duration now = clock_.Now() - t0;
    EngineInput in;
    WorkloadSupervisor::Health health;
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      in.stable_since = state_.monitor->StableSince();
      in.stop = state_.monitor->StopReason(now);
      health = workload_.HealthLocked(now);
    }
    if (state_.failed) return;  // a lost agent or lease: RevertInForce reverts what it can
    const std::optional<std::string> job_end = workload_.Supervise(now, health);
    std::string cause;
    std::vector<Action> actions;
    if (job_end) {
      actions = engine.Abort(now, *job_end);
      cause = "job";
      job_ended_ = true;
    } else if (state_.Interrupted()) {
      actions = engine.Abort(now, "interrupted (SIGINT/SIGTERM)");
      cause = "interrupted";
    } else {
      actions = engine.Advance(now, in);
      cause = in.stop ? "stop_condition" : "gate";
    }
    for (const Action& a : actions) {
      if (a.kind == Action::kAbort) {
        events_.Abort(a.reason, cause);
        abort_recorded_ = true;
        stopped_ = cause == "stop_condition" || cause == "gate";
        continue;
      }
      if (!Execute(a)) return;
      if (a.kind == Action::kPhaseEnd && a.phase == 0) {
        std::lock_guard<std::mutex> lock(state_.mu);
        state_.monitor->EndBaseline();
      }
    }
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      RecordImpactsLocked(clock_.Now() - t0);
    }
    ShowProgress(clock_.Now() - t0);
    if (engine.Finished()) break;
    const Duration next = engine.NextDeadline().value_or(now);
    const auto wake = t0 + std::min(next, now + std::chrono::milliseconds(20));
    std::unique_lock<std::mutex> lock(state_.mu);
    state_.cv.wait_until(lock, std::max(wake, clock_.Now()),
                         [this] { return state_.Aborted() || workload_.ExitedLocked(); });
  }
}

bool TimelineWalker::Execute(const Action& a) {
  const PhaseSpec* phase = a.phase >= 0 ? &s_.phases[static_cast<size_t>(a.phase)] : nullptr;
  switch (a.kind) {
    case Action::kPhaseStart:
      current_phase_ = phase->name;
      [[fallthrough]];
    case Action::kPhaseEnd:
      events_.Phase(a.kind, phase->name, a.reason);
      return true;
    case Action::kDone:
      return true;
    case Action::kAbort:
      return true;  // the caller records it with its cause
    case Action::kApply:
      return Apply(a, phase->faults[static_cast<size_t>(a.fault)]);
    case Action::kRevert:
      return Revert(a, phase->faults[static_cast<size_t>(a.fault)]);
  }
  return true;
}

bool TimelineWalker::Apply(const Action& a, const FaultSpec& f) {
  // Journalled before it is applied: fault_apply, then the call.
  events_.FaultApply(f, a.reason);
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    applied_[f.id] = f.node;  // in force as soon as it may be: RevertInForce reverts it
  }
  auto max_ms = std::chrono::duration_cast<std::chrono::milliseconds>(f.max_duration).count();
  auto r = agents_.node(f.node).link->Call(
      proto::kApply, proto::FaultSpec{f.id, f.kind, f.params, max_ms}.ToJson(), kCallTimeout);
  if (!r.ok()) {
    events_.Error(f.node, "apply " + f.id + ": " + r.status().message());
    state_.failed = true;
    return false;
  }
  // The agent's resolved target; an agent from before it said one gets the
  // scenario's interface param, as the fault_apply event has.
  events_.FaultApplied(f, r->value(proto::key::kTarget, f.params.value("interface", "")),
                       r->value(proto::key::kVerified, false));
  awaiting_impact_[f.id] = a.at;
  return true;
}

bool TimelineWalker::Revert(const Action& a, const FaultSpec& f) {
  events_.FaultRevert(f.id, f.node, a.reason);
  auto r =
      agents_.node(f.node).link->Call(proto::kRevert, {{proto::key::kFaultId, f.id}}, kCallTimeout);
  if (!r.ok()) {
    events_.Error(f.node, "revert " + f.id + ": " + r.status().message());
    state_.failed = true;
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    applied_.erase(f.id);
  }
  events_.FaultReverted(f.id, f.node, r->value(proto::key::kVerified, false));
  return true;
}

void TimelineWalker::RecordImpactsLocked(Duration at) {
  const std::optional<Duration> below = state_.monitor->last_below_band_end();
  for (auto it = awaiting_impact_.begin(); it != awaiting_impact_.end();) {
    if ((below && *below > it->second) || state_.monitor->SlowInProgress(at, it->second)) {
      events_.ImpactSeen(it->first, at - it->second);
      it = awaiting_impact_.erase(it);
    } else {
      ++it;
    }
  }
}

void TimelineWalker::ShowProgress(Duration now) {
  if (opt_.progress == nullptr) return;
  ProgressView v;
  v.phase = current_phase_;
  v.elapsed = now;
  v.total = total_;
  v.total_is_max = gated_;
  std::lock_guard<std::mutex> lock(state_.mu);
  v.busbw_gbps = state_.monitor->RecentBusbw();
  v.baseline_gbps = state_.monitor->baseline_median();
  for (const auto& [id, node] : applied_) {
    v.faults.push_back(id.find('@') == std::string::npos ? id + "@" + node : id);
  }
  v.attempt = workload_.restarts_locked();
  v.restarts_allowed = s_.workload.restart.max_restarts;
  opt_.progress->Update(v, clock_.Now());
}

void TimelineWalker::RevertInForce() {
  for (const auto& [id, node] : std::map<std::string, std::string>(applied_)) {
    for (auto& n : agents_.agents()) {
      if (n.name != node) continue;
      events_.FaultRevert(id, node, "drill ending");
      auto r = n.link->Call(proto::kRevert, {{proto::key::kFaultId, id}}, kCallTimeout);
      if (r.ok()) events_.FaultReverted(id, node, r->value(proto::key::kVerified, false));
    }
  }
}

}  // namespace fdrill

#include "harness/controller/timeline_walker.h"

#include <algorithm>
#include <set>

#include "common/wire/protocol.h"
#include "harness/controller/drill.h"
#include "harness/controller/progress.h"

namespace fdrill {

TimelineWalker::TimelineWalker(const DrillContext& ctx,
                               std::vector<std::unique_ptr<WorkloadSupervisor>>& workloads)
    : s_(ctx.s),
      opt_(ctx.opt),
      clock_(ctx.clock),
      state_(ctx.state),
      agents_(ctx.agents),
      events_(ctx.events),
      workloads_(workloads),
      total_(ctx.s.TotalDuration()),
      gated_(std::any_of(ctx.s.phases.begin(), ctx.s.phases.end(),
                         [](const PhaseSpec& p) { return p.gate.has_value(); })) {}

void TimelineWalker::Walk() {
  DrillEngine engine(s_);
  const auto t0 = clock_.Now();
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    state_.t0_wall_ns = clock_.WallNanos();
    state_.monitors.clear();
    for (const auto& w : workloads_) {
      state_.monitors.push_back(std::make_unique<LiveMonitor>(std::max(1, w->ReportingRanks()),
                                                              s_.stop, s_.recovery_window_iters));
    }
  }
  while (!engine.Finished()) {
    const Duration now = clock_.Now() - t0;
    EngineInput in;
    std::vector<WorkloadSupervisor::Health> health;
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      in.stable_since = StableSinceLocked();
      in.stop = StopReasonLocked(now);
      for (const auto& w : workloads_) health.push_back(w->HealthLocked(now));
    }
    if (state_.failed) return;  // a lost agent or lease: RevertInForce reverts what it can
    std::optional<std::string> job_end;
    for (size_t i = 0; i < workloads_.size() && !job_end; ++i) {
      job_end = workloads_[i]->Supervise(now, health[i]);
      const std::string& name = workloads_[i]->spec().name;
      if (job_end && !name.empty()) job_end = "workload " + name + ": " + *job_end;
    }
    std::string cause;
    std::vector<Action> actions;
    if (job_end) {
      actions = engine.Abort(now, *job_end);
      cause = "job";
      job_ended_ = true;
    } else if (state_.Interrupted()) {
      actions = engine.Abort(now, "interrupted (SIGINT/SIGTERM/SIGHUP)");
      cause = "interrupted";
    } else {
      actions = engine.Advance(now, in);
      cause = in.stop ? "stop_condition" : "gate";
    }
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action& a = actions[i];
      if (a.kind == Action::kAbort) {
        events_.Abort(a.reason, cause);
        abort_recorded_ = true;
        stopped_ = cause == "stop_condition" || cause == "gate";
        continue;
      }
      if (a.kind == Action::kApply || a.kind == Action::kRevert) {
        // Faults due at once (one on each of 1,000 nodes) go out together.
        size_t end = i + 1;
        while (end < actions.size() && actions[end].kind == a.kind) ++end;
        std::vector<const Action*> batch;
        for (size_t k = i; k < end; ++k) batch.push_back(&actions[k]);
        i = end - 1;
        if (!(a.kind == Action::kApply ? Apply(batch) : Revert(batch))) return;
        continue;
      }
      if (!Execute(a)) return;
      if (a.kind == Action::kPhaseStart && a.phase == 0) {
        state_.localiser.BaselineStarted(ToSeconds(now));
      }
      if (a.kind == Action::kPhaseEnd && a.phase == 0) {
        std::lock_guard<std::mutex> lock(state_.mu);
        for (auto& m : state_.monitors) m->EndBaseline();
        state_.localiser.BaselineEnded(ToSeconds(now));
      }
    }
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      RecordImpactsLocked(clock_.Now() - t0);
    }
    for (const auto& u : state_.localiser.Tick(ToSeconds(clock_.Now() - t0))) {
      events_.CulpritNamed(u.id, u.culprit);
    }
    ShowProgress(clock_.Now() - t0);
    if (engine.Finished()) break;
    const Duration next = engine.NextDeadline().value_or(now);
    WaitForTurn(t0, t0 + std::min(next, now + std::chrono::milliseconds(20)));
  }
}

void TimelineWalker::WaitForTurn(Clock::TimePoint t0, Clock::TimePoint wake) {
  std::unique_lock<std::mutex> lock(state_.mu);
  uint64_t arrived = state_.records_arrived;
  for (;;) {
    // Between turns, an impact is looked for as records arrive and when the
    // silence that would show one has lasted long enough (ImpactWatch).
    auto until = wake;
    if (const std::optional<Duration> look = impacts_.NextLook(state_.monitors))
      until = std::min(until, t0 + *look);
    state_.cv.wait_until(lock, std::max(until, clock_.Now()), [&] {
      return state_.Aborted() || AnyExitedLocked() ||
             (!impacts_.empty() && state_.records_arrived != arrived);
    });
    arrived = state_.records_arrived;
    RecordImpactsLocked(clock_.Now() - t0);
    if (state_.Aborted() || AnyExitedLocked() || clock_.Now() >= wake) return;
  }
}

bool TimelineWalker::Execute(const Action& a) {
  const PhaseSpec* phase = a.phase >= 0 ? &s_.phases[static_cast<size_t>(a.phase)] : nullptr;
  switch (a.kind) {
    case Action::kPhaseStart:
      current_phase_ = phase->name;
      events_.Phase(a.kind, phase->name, a.reason);
      return StartArrivals(phase->name);
    case Action::kPhaseEnd:
      events_.Phase(a.kind, phase->name, a.reason);
      return true;
    case Action::kDone:
      return true;
    case Action::kAbort:
      return true;  // the caller records it with its cause
    case Action::kApply:
      return Apply({&a});
    case Action::kRevert:
      return Revert({&a});
  }
  return true;
}

const FaultSpec& TimelineWalker::FaultOf(const Action& a) const {
  return s_.phases[static_cast<size_t>(a.phase)].faults[static_cast<size_t>(a.fault)];
}

bool TimelineWalker::Apply(const std::vector<const Action*>& batch) {
  // Journalled before they are applied: every fault_apply, then the calls,
  // to every agent at once.
  std::vector<std::string> nodes;
  std::vector<Json> bodies;
  for (const Action* a : batch) {
    const FaultSpec& f = FaultOf(*a);
    events_.FaultApply(f, a->reason);
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      applied_[f.id] = f.node;  // in force as soon as it may be: RevertInForce reverts it
    }
    auto max_ms = std::chrono::duration_cast<std::chrono::milliseconds>(f.max_duration).count();
    nodes.push_back(f.node);
    bodies.push_back(proto::FaultSpec{f.id, f.kind, f.params, max_ms}.ToJson());
  }
  const auto replies = agents_.CallEachNamed(nodes, proto::kApply, bodies, kCallTimeout);
  bool ok = true;
  for (size_t i = 0; i < batch.size(); ++i) {
    const FaultSpec& f = FaultOf(*batch[i]);
    const Result<Json>& r = replies[i];
    if (!r.ok()) {
      events_.Error(f.node, "apply " + f.id + ": " + r.status().message());
      state_.failed = true;
      ok = false;
      continue;
    }
    // The agent's resolved target; an agent from before it said one gets the
    // scenario's interface param, as the fault_apply event has.
    events_.FaultApplied(f, r->value(proto::key::kTarget, f.params.value("interface", "")),
                         r->value(proto::key::kVerified, false));
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      impacts_.Applied(f.id, batch[i]->at);
    }
    state_.localiser.FaultOn(f.id, ToSeconds(batch[i]->at), f.scope);
  }
  return ok;
}

bool TimelineWalker::Revert(const std::vector<const Action*>& batch) {
  std::vector<std::string> nodes;
  std::vector<Json> bodies;
  for (const Action* a : batch) {
    const FaultSpec& f = FaultOf(*a);
    events_.FaultRevert(f.id, f.node, a->reason);
    nodes.push_back(f.node);
    bodies.push_back({{proto::key::kFaultId, f.id}});
  }
  const auto replies = agents_.CallEachNamed(nodes, proto::kRevert, bodies, kCallTimeout);
  bool ok = true;
  for (size_t i = 0; i < batch.size(); ++i) {
    const FaultSpec& f = FaultOf(*batch[i]);
    const Result<Json>& r = replies[i];
    if (!r.ok()) {
      events_.Error(f.node, "revert " + f.id + ": " + r.status().message());
      state_.failed = true;
      ok = false;
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      applied_.erase(f.id);
    }
    state_.localiser.FaultOff(f.id, ToSeconds(batch[i]->at));
    events_.FaultReverted(f.id, f.node, r->value(proto::key::kVerified, false));
  }
  return ok;
}

std::optional<Duration> TimelineWalker::StableSinceLocked() const {
  std::optional<Duration> since;
  for (size_t i = 0; i < state_.monitors.size(); ++i) {
    // A tenant that arrived after the baseline has no band to be back in.
    if (!workloads_[i]->spec().start.empty()) continue;
    const std::optional<Duration> s = state_.monitors[i]->StableSince();
    if (!s) return std::nullopt;
    since = since ? std::max(*since, *s) : *s;
  }
  return since;
}

std::optional<std::string> TimelineWalker::StopReasonLocked(Duration now) const {
  for (size_t i = 0; i < state_.monitors.size(); ++i) {
    std::optional<std::string> reason = state_.monitors[i]->StopReason(now);
    if (!reason) continue;
    const std::string& name = workloads_[i]->spec().name;
    return name.empty() ? *reason : "workload " + name + ": " + *reason;
  }
  return std::nullopt;
}

bool TimelineWalker::AnyExitedLocked() const {
  return std::any_of(workloads_.begin(), workloads_.end(),
                     [](const auto& w) { return w->ExitedLocked(); });
}

// A fault's impact shows live once any workload's does.
bool TimelineWalker::StartArrivals(const std::string& phase) {
  for (auto& w : workloads_) {
    if (w->spec().start != phase || w->started()) continue;
    if (Status st = w->Begin(); !st.ok()) {
      events_.Error("workload " + w->spec().name + ": " + st.message());
      state_.failed = true;
      return false;
    }
  }
  return true;
}

// A fault's impact shows live once any workload's does.
void TimelineWalker::RecordImpactsLocked(Duration at) {
  for (const auto& [id, after] : impacts_.Look(state_.monitors, at)) events_.ImpactSeen(id, after);
}

void TimelineWalker::ShowProgress(Duration now) {
  if (opt_.progress == nullptr) return;
  ProgressView v;
  v.phase = current_phase_;
  v.elapsed = now;
  v.total = total_;
  v.total_is_max = gated_;
  std::lock_guard<std::mutex> lock(state_.mu);
  // The first workload's (with tenants, the one the drill is about).
  v.busbw_gbps = state_.monitors.front()->LiveBusbw(now);
  v.baseline_gbps = state_.monitors.front()->baseline_median();
  v.steps = s_.workload.Steps();
  for (const auto& [id, node] : applied_) {
    v.faults.push_back(id.find('@') == std::string::npos ? id + "@" + node : id);
  }
  v.attempt = workloads_.front()->restarts_locked();
  v.culprit = state_.localiser.Current();
  v.restarts_allowed = s_.workload.restart.max_restarts;
  opt_.progress->Update(v, clock_.Now());
}

std::vector<std::string> TimelineWalker::InForceOn(const std::string& node) const {
  std::vector<std::string> ids;
  std::lock_guard<std::mutex> lock(state_.mu);
  for (const auto& [id, on] : applied_) {
    if (on == node) ids.push_back(id);
  }
  return ids;
}

void TimelineWalker::Swept(const std::string& node, const std::vector<std::string>& ids) {
  std::lock_guard<std::mutex> lock(state_.mu);
  for (const auto& id : ids) {
    auto it = applied_.find(id);
    if (it != applied_.end() && it->second == node) applied_.erase(it);
  }
}

void TimelineWalker::RevertInForce() {
  std::map<std::string, std::string> in_force;
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    in_force = applied_;
  }
  // Every agent at once: with a fault on each of 1,000 nodes, one call
  // after another would cost the sum of their answers (and a dead agent's
  // timeout each).
  std::set<std::string> agents;
  for (const std::string& name : agents_.Names()) agents.insert(name);
  std::vector<std::string> ids, nodes;
  std::vector<Json> bodies;
  for (const auto& [id, node] : in_force) {
    if (!agents.count(node)) continue;
    events_.FaultRevert(id, node, "drill ending");
    ids.push_back(id);
    nodes.push_back(node);
    bodies.push_back({{proto::key::kFaultId, id}});
  }
  if (nodes.empty()) return;
  const auto replies = agents_.CallEachNamed(nodes, proto::kRevert, bodies, kCallTimeout);
  for (size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].ok())
      events_.FaultReverted(ids[i], nodes[i], replies[i]->value(proto::key::kVerified, false));
  }
}

}  // namespace fdrill

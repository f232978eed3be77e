// WorkloadSupervisor's restart policy (workload.restart): when the job
// counts as hung, what a failed job leads to (a relaunch after the backoff,
// or the reason the drill ends), killing what is left of it on every node,
// and the relaunch itself. The rest of the supervisor: workload_supervisor.cc.
#include <fmt/format.h>

#include "common/wire/protocol.h"
#include "harness/controller/drill.h"
#include "harness/controller/workload_supervisor.h"

namespace fdrill {

namespace {

// A relaunched job gets this long on top of hang_timeout to start (mpirun,
// wire-up, reading the checkpoint) before its silence counts as a hang.
constexpr auto kLaunchGrace = std::chrono::seconds(10);

}  // namespace

WorkloadSupervisor::Health WorkloadSupervisor::HealthLocked(Duration now) const {
  Health h;
  h.exit_code = workload_exit_;
  const auto& policy = w_.restart;
  if (!h.exit_code && !relaunch_at_ && policy.hang_timeout) {
    const Duration limit =
        *policy.hang_timeout + (monitor().AttemptReported() ? Duration{} : Duration(kLaunchGrace));
    if (monitor().QuietFor(now) > limit) {
      h.hang = fmt::format("no {} completed for {:.1f} s (hang_timeout {})",
                           w_.Steps() ? "step" : "iteration", ToSeconds(monitor().QuietFor(now)),
                           FormatDuration(*policy.hang_timeout));
    }
  }
  return h;
}

std::optional<std::string> WorkloadSupervisor::Supervise(Duration now, const Health& health) {
  std::optional<std::string> job_end;
  if (health.hang) {
    // A hung job is a failed one: stop what is left of it (the launcher,
    // and through it every rank), then the policy decides.
    events_.WorkloadHung(*health.hang);
    const int code = StopRemains();
    {
      std::lock_guard<std::mutex> lock(state_.mu);
      workload_exit_ = code;  // it has exited (a relaunch clears this)
    }
    job_end = OnJobFailure(now, code, true);
  } else if (health.exit_code) {
    if (w_.Train() && *health.exit_code == 0) {
      job_end = "the job finished its " + std::to_string(w_.steps) + " steps";
    } else if (w_.Steps() && *health.exit_code == 0) {
      job_end = "the job finished (exit 0)";
    } else {
      // The job ended before the drill did (a killed rank, a collective
      // error): a result of the drill, not a failure of the harness.
      events_.WorkloadFailed(*health.exit_code);
      (void)StopRemains();
      job_end = OnJobFailure(now, *health.exit_code, false);
    }
  }
  bool relaunch = false;
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    relaunch = relaunch_at_ && now >= *relaunch_at_;
  }
  if (relaunch && !job_end) Relaunch(now);
  return job_end;
}

std::optional<std::string> WorkloadSupervisor::OnJobFailure(Duration now, int code, bool hang) {
  const RestartSpec& policy = w_.restart;
  std::lock_guard<std::mutex> lock(state_.mu);
  if (restarts_ < policy.max_restarts) {
    // backoff, 2 x backoff, 4 x backoff, ... up to 5 minutes (or backoff, if longer).
    const Duration cap = std::max<Duration>(policy.backoff, std::chrono::minutes(5));
    Duration wait = policy.backoff;
    for (int k = 0; k < restarts_ && wait < cap; ++k) wait = std::min<Duration>(wait * 2, cap);
    ++restarts_;
    relaunch_at_ = now + wait;
    workload_exit_.reset();
    lost_from_ = monitor().last_complete_iter();
    events_.RelaunchScheduled(restarts_, wait, lost_from_);
    return std::nullopt;
  }
  const std::string what = hang ? "hung" : "exited with code " + std::to_string(code);
  if (policy.max_restarts == 0) return "the workload " + what + " during the drill";
  return "the job failed " + std::to_string(restarts_ + 1) + " times (last: it " + what +
         "); restarts exhausted (max_restarts " + std::to_string(policy.max_restarts) + ")";
}

int WorkloadSupervisor::StopRemains() {
  int code = -1;
  if (job_ && job_->running()) {
    // The launcher on this host first: mpirun/srun take their ranks down.
    code = job_->Stop(std::chrono::seconds(5));
    events_.WorkloadKilled("controller", code);
  }
  for (const AgentFacts* np : Nodes()) {
    const AgentFacts& n = *np;
    auto r = agents_.Call(n.name, proto::kWorkloadStop, {{proto::key::kKill, true}},
                          std::chrono::seconds(15));
    if (!r.ok()) {
      events_.Error(n.name, "stopping the failed job: " + r.status().message());
      continue;
    }
    if ((*r)[proto::key::kExitCode].is_number()) {
      code = (*r)[proto::key::kExitCode].get<int>();
      events_.WorkloadKilled(n.name, code);
    }
    if (r->value(proto::key::kRanksKilled, 0) > 0)
      events_.RanksKilled(n.name, r->value(proto::key::kRanksKilled, 0));
  }
  return code;
}

void WorkloadSupervisor::Relaunch(Duration now) {
  {
    std::lock_guard<std::mutex> lock(state_.mu);
    relaunch_at_.reset();
    ++attempt_;
    awaiting_first_ = true;
    monitor().NewAttempt(now);
  }
  events_.WorkloadRestart(StartNode(), launch_argv_, attempt_);
  if (auto st = Launch(launch_argv_); !st.ok()) {
    events_.Error(Lead().name, "relaunch: " + st.message());
    state_.failed = true;
  }
}

}  // namespace fdrill

#include "fabric/agent_supervisor.h"

#include "common/core/units.h"
#include "fabric/fabric_up.h"
#include "fabric/inventory.h"

namespace fdrill {

std::optional<Clock::TimePoint> RestartSchedule::OnDeath(Clock::TimePoint now) {
  const Clock::TimePoint at = now + policy_.restart_delay;
  // Starts that the interval ending at the next start still holds.
  while (!starts_.empty() && starts_.front() + policy_.start_limit_interval <= at) {
    starts_.pop_front();
  }
  if (static_cast<int>(starts_.size()) >= policy_.start_limit_burst) return std::nullopt;
  return at;
}

AgentSupervisor::AgentSupervisor(FabricState state, const FabricHost& host, RestartPolicy policy,
                                 SupervisorLog log)
    : state_(std::move(state)), host_(host), log_(std::move(log)) {
  for (size_t i = 0; i < state_.AgentHosts().size(); ++i) {
    watch_.push_back(Watch{RestartSchedule(policy), std::nullopt, false});
  }
}

void AgentSupervisor::Note(const FabricNode& n, const std::string& line) {
  const std::string text = "fdrill fabric supervisor: agent " + n.name + ": " + line;
  if (log_) log_(text);
  (void)host_.node->AppendLine(n.agent_log, text);
}

void AgentSupervisor::Died(FabricNode& n, Watch& w, Clock::TimePoint now, const std::string& why) {
  w.restart_at = w.schedule.OnDeath(now);
  if (w.restart_at) {
    Note(n, why + "; starting it again in " + FormatDuration(*w.restart_at - now));
    return;
  }
  w.gave_up = true;
  Note(n, why +
              "; started too often within the start limit, giving up on it (`fdrill fabric "
              "down` and up again to restart it); reverting its journal with --revert-all");
  // As the unit's ExecStopPost: the journal is swept even though no agent
  // will start again to sweep it.
  SpawnSpec sweep =
      InNode(n, {state_.agent_bin, "--node", n.name, "--state-dir", n.state_dir, "--revert-all"},
             n.agent_log);
  if (auto pid = host_.node->Spawn(sweep); !pid.ok()) {
    Note(n, "--revert-all could not start: " + pid.status().message());
  }
}

bool AgentSupervisor::Start(FabricNode& n, Watch& w, Clock::TimePoint now) {
  SpawnSpec spec = InNode(n, AgentArgv(state_, n), n.agent_log);
  auto pid = host_.node->Spawn(spec);
  w.schedule.OnStart(now);
  if (!pid.ok()) {
    Died(n, w, now, "could not be started: " + pid.status().message());
    return false;
  }
  n.agent_pid = *pid;
  ++n.agent_restarts;
  Note(n, "started again, pid " + std::to_string(*pid) + " (restart " +
              std::to_string(n.agent_restarts) + "); its journal sweep reverts what was left");
  return true;
}

Status AgentSupervisor::Tick() {
  bool changed = false;
  std::vector<FabricNode*> hosts = state_.AgentHosts();
  for (size_t i = 0; i < hosts.size(); ++i) {
    FabricNode& n = *hosts[i];
    Watch& w = watch_[i];
    if (w.gave_up || n.agent_pid <= 0) continue;  // never started: not ours to start
    const Clock::TimePoint now = host_.clock->Now();
    if (!w.restart_at) {
      if (AgentAlive(*host_.fs, state_.agent_bin, n.name, n.agent_pid)) continue;
      Died(n, w, now, "pid " + std::to_string(n.agent_pid) + " is gone");
      if (!w.restart_at || *w.restart_at > now) continue;
    }
    if (*w.restart_at > now) continue;
    w.restart_at.reset();
    changed = Start(n, w, now) || changed;
  }
  if (!changed) return Status::Ok();
  return host_.node->ReplaceFile(state_.state_dir + "/fabric.json", FabricStateToJson(state_))
      .Annotate("supervisor saving fabric.json");
}

std::vector<std::string> AgentSupervisor::GaveUp() const {
  std::vector<std::string> out;
  std::vector<const FabricNode*> hosts = state_.AgentHosts();
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (watch_[i].gave_up) out.push_back(hosts[i]->name);
  }
  return out;
}

std::vector<std::string> SupervisorArgv(const std::string& program, const std::string& state_dir) {
  return {program, "fabric", "supervise", "--state-dir", state_dir};
}

bool SupervisorAlive(SysFs& fs, const std::string& state_dir, int pid) {
  if (pid <= 0) return false;
  const std::vector<std::string> argv = ReadCmdline(fs, pid);
  for (size_t i = 0; i + 3 < argv.size(); ++i) {
    if (argv[i] == "fabric" && argv[i + 1] == "supervise" && argv[i + 2] == "--state-dir" &&
        argv[i + 3] == state_dir)
      return true;
  }
  return false;
}

namespace {

// fabric.json names this supervisor: Ok; anything else says why not.
Status Claimed(const FabricHost& host, const std::string& state_dir, int self_pid) {
  auto state = LoadFabricState(*host.fs, state_dir);
  if (!state.ok()) return state.status();
  if (state->supervisor_pid != self_pid) {
    return FailedPrecondition("fabric.json names supervisor pid " +
                              std::to_string(state->supervisor_pid) + ", not this one (" +
                              std::to_string(self_pid) + ")");
  }
  return Status::Ok();
}

}  // namespace

Status Supervise(const SuperviseOptions& options, const FabricHost& host, std::string* ended) {
  auto stopped = [&] { return options.stop != nullptr && options.stop->load(); };
  const auto deadline = host.clock->Now() + options.claim_timeout;
  Status claimed = Claimed(host, options.state_dir, options.self_pid);
  while (!claimed.ok()) {
    if (stopped()) return Status::Ok();
    if (host.clock->Now() >= deadline) {
      return FailedPrecondition("fabric up never handed the fabric at " + options.state_dir +
                                " to this supervisor within " +
                                FormatDuration(options.claim_timeout) + ": " + claimed.message());
    }
    host.node->SleepFor(std::chrono::milliseconds(50));
    claimed = Claimed(host, options.state_dir, options.self_pid);
  }
  auto state = LoadFabricState(*host.fs, options.state_dir);
  if (!state.ok()) return state.status();
  AgentSupervisor supervisor(std::move(state).value(), host, options.policy, options.log);
  if (options.log) {
    options.log("fdrill fabric supervisor: supervising " +
                std::to_string(supervisor.state().AgentHosts().size()) + " agent(s) of " +
                options.state_dir);
  }
  const std::string file = options.state_dir + "/fabric.json";
  for (int turn = 1;; ++turn) {
    if (stopped()) {
      if (ended) *ended = "stopped by a signal";
      return Status::Ok();
    }
    if (!host.fs->Exists(file)) {
      if (ended) *ended = file + " is gone (fabric down)";
      return Status::Ok();
    }
    // Every tenth turn (a second at the default tick): still this supervisor's fabric?
    if (turn % 10 == 0) {
      if (Status s = Claimed(host, options.state_dir, options.self_pid); !s.ok()) {
        if (ended) *ended = s.message();
        return Status::Ok();
      }
    }
    if (Status s = supervisor.Tick(); !s.ok() && options.log) options.log(s.message());
    host.node->SleepFor(options.tick);
  }
}

}  // namespace fdrill

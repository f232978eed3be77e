// The emulated fabric's agents, supervised as the .deb's systemd unit
// supervises a real node's (packaging/fdrill-agent.service): an agent that
// dies (SIGKILL, a crash) is started again in its node with the same command
// line, and its start-up journal sweep (AgentService::SweepJournal) reverts
// whatever faults the dead one left applied.
//
// RestartSchedule is systemd's Restart=always with RestartSec= and
// StartLimitIntervalSec=/StartLimitBurst= for one agent; pure, for a fake
// clock. AgentSupervisor looks at every agent once per Tick through the
// fabric's seams (AgentAlive on /proc/<pid>/cmdline, NodeSystem::Spawn), so
// tests drive it with recording fakes. Supervise is the loop `fdrill fabric
// supervise` runs: one root-namespace process per fabric, started last by
// `fabric up`, stopped first by `fabric down`.
//
// Contract:
//  - The supervisor only supervises a fabric whose fabric.json names it
//    (supervisor_pid == its pid); it exits when fabric.json is gone or names
//    another, so a supervisor whose `up` failed or whose fabric was torn
//    down never restarts anything.
//  - On each start it rewrites fabric.json whole (NodeSystem::ReplaceFile)
//    with the agent's new pid and restart count; it is fabric.json's only
//    writer once `up` has returned.
//  - Every death, restart and refusal is one line in that agent's log
//    ("fdrill fabric supervisor: ...") and in the supervisor's own.
//  - When an agent hits the start limit, the supervisor gives up on it and
//    runs `fdrill-agent --revert-all` once in its node, as the unit's
//    ExecStopPost does, so its journal is swept even so.
//  - Not thread-safe; one Tick at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fabric/fabric_state.h"
#include "fabric/node_system.h"

namespace fdrill {

struct RestartPolicy {
  // RestartSec=: from the death seen to the next start.
  Duration restart_delay = std::chrono::milliseconds(500);
  // StartLimitBurst= starts within StartLimitIntervalSec=; one more is refused.
  int start_limit_burst = 5;
  Duration start_limit_interval = std::chrono::seconds(30);
};

class RestartSchedule {
 public:
  explicit RestartSchedule(RestartPolicy policy) : policy_(policy) {}

  // The agent was found dead at `now`: when to start it again, or nullopt
  // when start_limit_burst starts fall within the start_limit_interval
  // that would end at that start (systemd's start limit: give up).
  std::optional<Clock::TimePoint> OnDeath(Clock::TimePoint now);
  // A start was made at `now`.
  void OnStart(Clock::TimePoint now) { starts_.push_back(now); }

 private:
  RestartPolicy policy_;
  std::deque<Clock::TimePoint> starts_;
};

// The line the supervisor's own log gets, and each agent's log.
using SupervisorLog = std::function<void(const std::string& line)>;

class AgentSupervisor {
 public:
  AgentSupervisor(FabricState state, const FabricHost& host, RestartPolicy policy = {},
                  SupervisorLog log = nullptr);

  // Looks at every agent once: a dead one is scheduled (or given up on), one
  // whose restart is due is started. Saves fabric.json when a pid changed;
  // an error only when fabric.json could not be written.
  Status Tick();

  const FabricState& state() const { return state_; }
  // Agents given up on (start limit), by name.
  std::vector<std::string> GaveUp() const;

 private:
  struct Watch {
    RestartSchedule schedule;
    std::optional<Clock::TimePoint> restart_at;  // dead, to be started then
    bool gave_up = false;
  };
  void Died(FabricNode& n, Watch& w, Clock::TimePoint now, const std::string& why);
  // Starts n's agent again; false when it could not be (then Died).
  bool Start(FabricNode& n, Watch& w, Clock::TimePoint now);
  void Note(const FabricNode& n, const std::string& line);

  FabricState state_;
  FabricHost host_;
  SupervisorLog log_;
  std::vector<Watch> watch_;  // per state_.AgentHosts() entry
};

// The command that runs the supervisor of the fabric at state_dir, given
// the program that has the `fabric supervise` subcommand (fdrill itself).
std::vector<std::string> SupervisorArgv(const std::string& program, const std::string& state_dir);

// True when `pid` is alive and its command line is SupervisorArgv's for
// state_dir ("fabric", "supervise", "--state-dir", state_dir among its
// words) — a recycled pid is never mistaken for the supervisor.
bool SupervisorAlive(SysFs& fs, const std::string& state_dir, int pid);

struct SuperviseOptions {
  std::string state_dir;
  int self_pid = 0;  // getpid(): fabric.json must name it
  RestartPolicy policy;
  Duration tick = std::chrono::milliseconds(100);
  // How long to wait for `up` to name this supervisor in fabric.json.
  Duration claim_timeout = std::chrono::seconds(10);
  const std::atomic<bool>* stop = nullptr;  // SIGTERM/SIGINT
  SupervisorLog log;
};

// The supervisor's life: waits until fabric.json names self_pid, then
// Ticks every `tick` until *stop, or fabric.json is gone or names another
// supervisor (Ok with why it ended in *ended). FailedPrecondition when
// fabric.json never named it within claim_timeout.
Status Supervise(const SuperviseOptions& options, const FabricHost& host,
                 std::string* ended = nullptr);

}  // namespace fdrill

// daemon_pause: stops one of the node's cluster daemons with SIGSTOP for the
// fault's window and resumes it with SIGCONT — a hung slurmd. The node's
// jobs keep running (their slurmstepd is another process), but slurmctld no
// longer hears the node: it marks it not responding, then DOWN after
// SlurmdTimeout, and kills or requeues the jobs there. What Slurm did is
// what the drill records next to its own numbers (controller/slurm_watch.h).
//
// Only the daemons in kPausableDaemons can be selected, by executable name
// (basename of /proc/PID/exe) in the agent's own network namespace — the
// node's, on the emulated fabric where every node shares one pid namespace.
// Capture saves (pid, start time) of each, so a journal sweep resumes
// exactly those processes and never a reused pid; Revert sends SIGCONT to
// each still-same process (harmless on a running one: safe twice and after
// a partial Apply).
#include <signal.h>

#include <array>
#include <chrono>
#include <string_view>
#include <thread>

#include "common/host/processes.h"
#include "injectors/injector.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

// The daemons a drill may pause, by the name a scenario gives and the
// executables that are it: what a cluster's node runs for its scheduler.
// Nothing else on a node can be stopped through this kind. (Debian's
// slurm-wlm installs slurmd as /usr/sbin/slurmd-wlm behind an alternative.)
struct Pausable {
  std::string_view name;
  std::array<std::string_view, 2> executables;
};
constexpr std::array<Pausable, 1> kPausableDaemons = {{{"slurmd", {"slurmd", "slurmd-wlm"}}}};

bool IsExecutableOf(std::string_view daemon, const std::string& exe) {
  for (const Pausable& d : kPausableDaemons) {
    if (d.name != daemon) continue;
    for (std::string_view e : d.executables)
      if (exe == e) return true;
  }
  return false;
}

struct DaemonProc {
  int pid = 0;
  uint64_t start_ticks = 0;
};

class DaemonPause final : public Fault {
 public:
  DaemonPause(Host host, std::string daemon) : host_(host), daemon_(std::move(daemon)) {}

  Status Check() override {
    if (host_.procs == nullptr) return Unsupported("daemon_pause: this agent has no process table");
    auto found = Find();
    return found.ok() ? Status::Ok() : found.status();
  }

  Status Capture() override {
    auto found = Find();
    if (!found.ok()) return found.status();
    procs_ = *found;
    return Status::Ok();
  }

  Status Apply() override { return SignalAll(SIGSTOP, "SIGSTOP"); }

  // A stop takes effect asynchronously (a process inside a system call
  // stops on its way out): look again for up to 1 s.
  Status Verify() override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (;;) {
      Status s = AllIn('T');
      if (s.ok() || std::chrono::steady_clock::now() >= deadline) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  Status Revert() override { return SignalAll(SIGCONT, "SIGCONT"); }

  Status VerifyReverted() override {
    for (const DaemonProc& d : procs_) {
      auto info = host_.procs->Inspect(d.pid);
      if (info.ok() && info->start_ticks == d.start_ticks && info->state == 'T')
        return FailedPrecondition("daemon_pause: " + daemon_ + " pid " + std::to_string(d.pid) +
                                  " is still stopped");
    }
    return Status::Ok();
  }

  Json Saved() const override {
    Json list = Json::array();
    for (const DaemonProc& d : procs_) list.push_back({{"pid", d.pid}, {"start", d.start_ticks}});
    return {{"daemon", daemon_}, {"procs", list}};
  }

  Status Load(const Json& saved) override {
    procs_.clear();
    for (const auto& d : saved.value("procs", Json::array())) {
      if (!d.is_object() || !d.contains("pid") || !d.contains("start"))
        return InvalidArgument("daemon_pause: saved state has a malformed process");
      procs_.push_back({d["pid"].get<int>(), d["start"].get<uint64_t>()});
    }
    return Status::Ok();
  }

  std::string Target() const override { return daemon_; }

  std::string ResolvedTarget() const override {
    if (procs_.empty()) return daemon_;
    std::string pids;
    for (const DaemonProc& d : procs_) pids += (pids.empty() ? "" : ", ") + std::to_string(d.pid);
    return daemon_ + " (pid " + pids + ")";
  }

  std::vector<std::string> Mechanism() const override {
    const std::string what = daemon_ + " (its executable, in this node's network namespace)";
    return {"apply: kill -STOP " + what, "revert: kill -CONT " + what};
  }

 private:
  Result<std::vector<DaemonProc>> Find() {
    auto pids = host_.procs->Pids();
    if (!pids.ok()) return pids.status();
    const std::string own_ns = host_.procs->OwnNetNs();
    std::vector<DaemonProc> out;
    for (int pid : *pids) {
      if (pid == host_.procs->OwnPid()) continue;
      auto info = host_.procs->Inspect(pid);
      if (!info.ok()) continue;  // ended while we looked
      if (!IsExecutableOf(daemon_, info->exe_name) || info->net_ns != own_ns || info->state == 'Z')
        continue;
      out.push_back({pid, info->start_ticks});
    }
    if (out.empty()) {
      return NotFound("params.daemon: no " + daemon_ +
                      " runs on this node (its executable, in this node's network namespace); "
                      "is the node part of the cluster's scheduler?");
    }
    return out;
  }

  Status SignalAll(int sig, const char* name) {
    Status first = Status::Ok();
    for (const DaemonProc& d : procs_) {
      Status s = SignalIfSame(*host_.procs, d.pid, d.start_ticks, sig);
      if (!s.ok() && first.ok())
        first = s.Annotate("daemon_pause: " + std::string(name) + " " + daemon_ + " pid " +
                           std::to_string(d.pid));
    }
    return first;
  }

  Status AllIn(char state) {
    for (const DaemonProc& d : procs_) {
      auto info = host_.procs->Inspect(d.pid);
      if (!info.ok() || info->start_ticks != d.start_ticks)
        return FailedPrecondition("daemon_pause: " + daemon_ + " pid " + std::to_string(d.pid) +
                                  " is gone");
      if (info->state != state)
        return FailedPrecondition("daemon_pause: " + daemon_ + " pid " + std::to_string(d.pid) +
                                  " is in state " + std::string(1, info->state) +
                                  ", expected T (stopped)");
    }
    return Status::Ok();
  }

  Host host_;
  std::string daemon_;
  std::vector<DaemonProc> procs_;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeDaemonPause(const Json& params, Host host) {
  ParamReader p(params);
  auto daemon = p.String("daemon");
  if (!daemon.ok()) return daemon.status();
  bool allowed = false;
  std::string list;
  for (const Pausable& d : kPausableDaemons) {
    allowed = allowed || *daemon == d.name;
    list += (list.empty() ? "" : ", ") + std::string(d.name);
  }
  if (!allowed) {
    return InvalidArgument("params.daemon: \"" + *daemon + "\" is not one of " + list +
                           " (the daemons a drill may pause)");
  }
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<DaemonPause>(host, *daemon));
}

}  // namespace fdrill

// FakeProcessTable: a process table in memory. Signals act as the kernel
// would on the fields injectors observe (SIGSTOP → state T, SIGCONT → S,
// SIGKILL/SIGTERM → gone) and are recorded; Spawn adds a process running
// argv (state S, exe_name = basename of argv[0]) and records argv. Counts
// the listings of the table (Pids) and records the pids Stat read.
#pragma once

#include <signal.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/host/processes.h"

namespace fdrill {

class FakeProcessTable final : public ProcessTable {
 public:
  static constexpr char kOwnNs[] = "net:[4026531999]";

  // A workload rank of this node: fdrill-collective with the rank in its env.
  ProcInfo& AddRank(int pid, int rank, std::string net_ns = kOwnNs) {
    ProcInfo p;
    p.pid = pid;
    p.start_ticks = 1000 + static_cast<uint64_t>(pid);
    p.state = 'S';
    p.exe_name = "fdrill-collective";
    p.net_ns = std::move(net_ns);
    p.env["OMPI_COMM_WORLD_RANK"] = std::to_string(rank);
    return procs[pid] = p;
  }
  ProcInfo& Add(int pid, std::string exe_name) {
    ProcInfo p;
    p.pid = pid;
    p.start_ticks = 1000 + static_cast<uint64_t>(pid);
    p.state = 'S';
    p.exe_name = std::move(exe_name);
    p.net_ns = kOwnNs;
    return procs[pid] = p;
  }

  Result<std::vector<int>> Pids() override {
    ++pid_lists;
    std::vector<int> out;
    for (const auto& [pid, _] : procs) out.push_back(pid);
    return out;
  }
  Result<ProcInfo> Inspect(int pid) override {
    auto it = procs.find(pid);
    if (it == procs.end()) return NotFound("process " + std::to_string(pid) + " is gone");
    return it->second;
  }
  Result<ProcInfo> Stat(int pid) override {
    stats.push_back(pid);
    auto it = procs.find(pid);
    if (it == procs.end()) return NotFound("process " + std::to_string(pid) + " is gone");
    ProcInfo p;
    p.pid = pid;
    p.start_ticks = it->second.start_ticks;
    p.state = it->second.state;
    p.cpu_ticks = it->second.cpu_ticks;
    return p;
  }
  int OwnPid() override { return 4242; }
  std::string OwnNetNs() override { return kOwnNs; }
  Status Signal(int pid, int sig) override {
    signals.emplace_back(pid, sig);
    if (fail_signal) return Unavailable("kill: Operation not permitted");
    auto it = procs.find(pid);
    if (it == procs.end()) return NotFound("process " + std::to_string(pid) + " is gone");
    if (sig == SIGSTOP) it->second.state = 'T';
    if (sig == SIGCONT && it->second.state == 'T') it->second.state = 'S';
    if (sig == SIGKILL || sig == SIGTERM) procs.erase(it);
    return Status::Ok();
  }
  Result<int> Spawn(const std::vector<std::string>& argv) override {
    spawned.push_back(argv);
    if (fail_spawn) return Unavailable("cannot start " + argv[0] + ": No such file or directory");
    int pid = next_pid++;
    ProcInfo& p = Add(pid, argv[0].substr(argv[0].rfind('/') + 1));
    p.rss_kib = spawn_rss_kib;
    return pid;
  }
  void Reap(int pid) override { reaped.push_back(pid); }

  std::map<int, ProcInfo> procs;
  int pid_lists = 0;                         // Pids() calls: listings of /proc
  std::vector<int> stats;                    // the pids Stat read
  std::vector<std::pair<int, int>> signals;  // (pid, sig)
  std::vector<std::vector<std::string>> spawned;
  std::vector<int> reaped;
  bool fail_signal = false;
  bool fail_spawn = false;
  uint64_t spawn_rss_kib = 0;
  int next_pid = 9000;
};

}  // namespace fdrill

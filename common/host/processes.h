// The node's processes behind a narrow interface, for the process and host
// injectors (rank_pause, rank_kill, cpu_hog, mem_pressure): list them,
// inspect one through /proc, signal one by pid, start a helper child.
// Real implementation in real_processes.cc; tests/fakes/fake_processes.h
// keeps a table and records every signal and spawn.
//
// A pid alone may be reused once a process ends; (pid, start_ticks) names
// one process for the life of the machine, so every signal an injector sends
// after Capture goes through SignalIfSame.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/core/result.h"

namespace fdrill {

struct ProcInfo {
  int pid = 0;
  uint64_t start_ticks = 0;  // /proc/PID/stat field 22: start time, clock ticks after boot
  char state = '?';          // /proc/PID/stat field 3: R S D T t Z X ...
  uint64_t cpu_ticks = 0;    // fields 14 + 15: user + system CPU time, clock ticks
  std::string exe_name;      // basename of /proc/PID/exe; "" when unreadable
  std::string net_ns;        // /proc/PID/ns/net link text, e.g. "net:[4026531840]"
  std::map<std::string, std::string> env;  // /proc/PID/environ
  uint64_t rss_kib = 0;                    // VmRSS from /proc/PID/status
};

class ProcessTable {
 public:
  virtual ~ProcessTable() = default;
  virtual Result<std::vector<int>> Pids() = 0;
  // NotFound once the process is gone (or is a zombie that left /proc).
  virtual Result<ProcInfo> Inspect(int pid) = 0;
  // Only what /proc/PID/stat holds (pid, state, cpu_ticks, start_ticks; the
  // rest left empty): one file read, for a process already Inspected and
  // followed (the telemetry's ranks, every second). NotFound once it is gone.
  virtual Result<ProcInfo> Stat(int pid) = 0;
  virtual int OwnPid() = 0;
  virtual std::string OwnNetNs() = 0;
  // kill(pid, sig); NotFound when there is no such process.
  virtual Status Signal(int pid, int sig) = 0;
  // Starts argv detached from our stdio (stdin/stdout/stderr → /dev/null)
  // in a new session; argv[0] without a '/' is looked up beside the running
  // executable first (fdrill-burn ships next to fdrill-agent), then in PATH.
  virtual Result<int> Spawn(const std::vector<std::string>& argv) = 0;
  // Waits for a child started by Spawn after it was killed (no zombie left).
  virtual void Reap(int pid) = 0;
};

// Sends sig to pid only while it is still the process (pid, start_ticks):
// Ok when sent; Ok too when it is gone or the pid now names another process
// (nothing of ours to signal).
Status SignalIfSame(ProcessTable& table, int pid, uint64_t start_ticks, int sig);

// The rank number a workload process carries in its environment: Open MPI's
// OMPI_COMM_WORLD_RANK, PMIx's PMIX_RANK, Slurm's SLURM_PROCID, then
// FDRILL_RANK; -1 when none is set or parses.
int RankOf(const ProcInfo& info);

}  // namespace fdrill

// RealProcessTable: /proc, kill(2) and posix_spawn. Thread-compatible.
#pragma once

#include "common/host/processes.h"

namespace fdrill {

class RealProcessTable final : public ProcessTable {
 public:
  // proc_root: "/proc" except in tests of the parser.
  explicit RealProcessTable(std::string proc_root = "/proc") : proc_(std::move(proc_root)) {}
  Result<std::vector<int>> Pids() override;
  Result<ProcInfo> Inspect(int pid) override;
  Result<ProcInfo> Stat(int pid) override;
  int OwnPid() override;
  std::string OwnNetNs() override;
  Status Signal(int pid, int sig) override;
  Result<int> Spawn(const std::vector<std::string>& argv) override;
  void Reap(int pid) override;

 private:
  std::string proc_;
};

// Parses the text of /proc/PID/stat (the comm field may hold spaces and
// parentheses: the fields after it start after the LAST ')').
Status ParseProcStat(const std::string& text, ProcInfo* info);

}  // namespace fdrill

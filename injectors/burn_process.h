// A helper process that loads the node while a fault is applied: cpu_hog
// (N busy threads) and mem_pressure (N bytes allocated and touched) run
// `fdrill-burn` (agents/burn_main.cc), which ships beside fdrill-agent.
//
// Lifetime: fdrill-burn sets PR_SET_PDEATHSIG(SIGKILL) and exits at once
// when its parent is not the agent that started it, so it dies with the
// agent; it runs in a cgroup of its own under the node's cgroup v2 mount
// (found in /proc/self/mountinfo; `fdrill-burn-<agent pid>-<n>`) when there
// is one. Capture names the cgroup, and Saved() carries it into the journal,
// so a restarted agent's sweep kills whatever is left in it (cgroup.kill,
// kernel 5.14+) and removes it. Revert kills the process by (pid, start
// time) and through the cgroup, reaps it, and removes the cgroup: safe after
// a failed Apply and safe twice.
#pragma once

#include <string>
#include <vector>

#include "harness/host/processes.h"
#include "injectors/injector.h"

namespace fdrill {

inline constexpr char kBurnExe[] = "fdrill-burn";

class BurnFault : public Fault {
 public:
  explicit BurnFault(Host host) : host_(host) {}

  Status Check() override;
  Status Capture() override;
  Json Saved() const override;
  Status Load(const Json& saved) override;
  Status Apply() override;
  Status Verify() override;
  Status Revert() override;
  Status VerifyReverted() override;
  std::vector<std::string> Mechanism() const override;

 protected:
  // fdrill-burn's arguments after the program name, before the parent pid.
  virtual std::vector<std::string> BurnArgs() const = 0;
  // Extra condition once the process runs (mem_pressure: resident size).
  virtual Status Loaded(const ProcInfo& info) const = 0;
  // How long Apply waits for Loaded() before it gives up.
  virtual Duration LoadTimeout() const = 0;
  virtual std::string Kind() const = 0;

  Host host_;

 private:
  std::vector<std::string> Argv() const;

  std::string cgroup_;  // "" when the node has no cgroup v2 mount
  int pid_ = 0;
  uint64_t start_ticks_ = 0;
};

// The cgroup v2 mount point from /proc/self/mountinfo text; "" when none.
std::string CgroupV2Mount(const std::string& mountinfo);

}  // namespace fdrill

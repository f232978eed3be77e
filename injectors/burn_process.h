// A helper process that loads the node while a fault is applied: cpu_hog
// (N busy threads) and mem_pressure (N bytes allocated and touched) run
// `fdrill-burn` (agents/burn_main.cc), which ships beside fdrill-agent.
//
// Lifetime: fdrill-burn sets PR_SET_PDEATHSIG(SIGKILL) and exits at once
// when its parent is not the agent that started it, so it dies with the
// agent; it runs in a cgroup of its own under the node's cgroup v2 mount
// (found in /proc/self/mountinfo; `fdrill-burn-<netns>-<agent pid>-<n>`,
// BurnCgroupPrefix) when there is one. Capture names the cgroup, and Saved() carries it into the
// journal, so a restarted agent's sweep kills whatever is left in it (cgroup.kill, kernel 5.14+)
// and removes it. Revert kills the process by (pid, start time) and through the cgroup, reaps it,
// and removes the cgroup: safe after a failed Apply and safe twice.
#pragma once

#include <string>
#include <vector>

#include "common/host/processes.h"
#include "injectors/injector.h"

namespace fdrill {

inline constexpr char kBurnExe[] = "fdrill-burn";

// "fdrill-burn-<inode of the agent's network namespace>-": what every burn
// cgroup of this node's agents begins with, whichever pid made it. The
// nodes of an emulated fabric (and of two fabrics side by side) share one
// cgroup tree; each counts only its own in its snapshot.
std::string BurnCgroupPrefix(ProcessTable& procs);

// What one kind of burn runs, and how it is named.
struct BurnSpec {
  std::string kind;               // "cpu_hog": prefixes messages
  std::string target;             // what Target() names: "cpu", "memory"
  std::vector<std::string> args;  // fdrill-burn's arguments after the program name,
                                  // before the parent pid: {"cpu", "4"}
  Duration load_timeout{};        // how long Apply waits for Loaded()
};

class BurnFault : public Fault {
 public:
  BurnFault(Host host, BurnSpec spec) : host_(host), spec_(std::move(spec)) {}

  Status Check() override;
  Status Capture() override;
  Json Saved() const override;
  Status Load(const Json& saved) override;
  Status Apply() override;
  Status Verify() override;
  Status Revert() override;
  Status VerifyReverted() override;
  std::vector<std::string> Mechanism() const override;
  std::string Target() const override { return spec_.target; }
  // What a burn loads: the node's CPUs or memory, all of them.
  std::string ResolvedTarget() const override { return "node"; }

 protected:
  // Extra condition once the process runs (mem_pressure: resident size);
  // none by default.
  virtual Status Loaded(const ProcInfo& /*info*/) const { return Status::Ok(); }

 private:
  std::vector<std::string> Argv() const;
  const std::string& Kind() const { return spec_.kind; }

  Host host_;
  BurnSpec spec_;
  std::string cgroup_;  // "" when the node has no cgroup v2 mount
  int pid_ = 0;
  uint64_t start_ticks_ = 0;
};

// The cgroup v2 mount point from /proc/self/mountinfo text; "" when none.
std::string CgroupV2Mount(const std::string& mountinfo);

}  // namespace fdrill

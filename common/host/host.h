// The machine behind narrow interfaces. Injectors and the fabric act on the
// machine only through these; real implementations live in real_*.cc, and
// tests/fakes has recording fakes that tests assert on.
//
// ProcessRunner runs argv directly (never through a shell) with a timeout.
// SysFs reads and writes small kernel files (/sys, /proc).
// Gpus is NVML (host/gpus.h; the real one dlopens the driver's library).
// Both are used from one thread at a time per instance unless noted.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/core/result.h"
#include "common/core/units.h"
#include "common/host/programs.h"
#include "common/host/tcp_sockets.h"

namespace fdrill {

struct ProcessResult {
  int exit_code = -1;  // exit status, or 128+signal when killed
  std::string out;
  std::string err;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs argv[0] (looked up in PATH) with argv. Fails only when the process
  // could not be started or ran past `timeout` (then it is killed); a
  // non-zero exit is a result, not an error. A program that is not installed
  // fails with ProgramMissing (code kNotInstalled, host/programs.h) in every
  // implementation, wrappers and fakes included: callers test
  // IsProgramMissing() and never parse a message or an exit code.
  virtual Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration timeout) = 0;
};

// Runs argv and turns a non-zero exit into an error carrying the command and
// its stderr. The common case for tc / ip.
Result<std::string> RunChecked(ProcessRunner& runner, const std::vector<std::string>& argv,
                               Duration timeout = std::chrono::seconds(10));

// RunChecked on each argv in order, stopping at the first that fails; its
// error is annotated with `who` ("port_loss up0"). A fault's Apply.
Status RunEachChecked(ProcessRunner& runner, const std::vector<std::vector<std::string>>& steps,
                      const std::string& who, Duration timeout = std::chrono::seconds(10));

// "tc qdisc replace dev fab0 ..." for messages and plans.
std::string JoinArgv(const std::vector<std::string>& argv);

class SysFs {
 public:
  virtual ~SysFs() = default;
  virtual Result<std::string> Read(const std::string& path) = 0;
  virtual Status Write(const std::string& path, const std::string& value) = 0;
  // Write, for a secret (a private key): the file is mode 0600 whatever
  // the umask, an existing one made so before the new text goes in. A fake
  // with no file modes records it as a Write.
  virtual Status WriteSecret(const std::string& path, const std::string& value) {
    return Write(path, value);
  }
  virtual bool Exists(const std::string& path) = 0;
  // mkdir / rmdir of one directory (a cgroup): Ok when it already is so.
  virtual Status MakeDir(const std::string& path) = 0;
  virtual Status RemoveDir(const std::string& path) = 0;
  // unlink of one file: Ok when it is already gone.
  virtual Status RemoveFile(const std::string& path) = 0;
  // The entry names of directory `dir` (files, directories and links; no
  // "." or ".."), sorted bytewise. NotFound when `dir` does not exist, so a
  // caller can tell "no such tree" (no HCA driver loaded) from a failure.
  virtual Result<std::vector<std::string>> List(const std::string& dir) = 0;
  // Whether paths a and b are the same file or directory (stat(2) of each,
  // links followed: device and inode). Unsupported where a fake cannot say.
  virtual Result<bool> SameFile(const std::string& a, const std::string& b) {
    return Unsupported("same file " + a + ", " + b + ": not available here");
  }
};

class ProcessTable;  // processes.h
class Gpus;          // gpus.h
class Verbs;         // verbs.h
class NetStack;      // net_stack.h

// A bundle handed to injectors and agents: everything they may touch.
// `procs` may be null where no injector needs it (the controller's
// validation).
struct Host {
  ProcessRunner* runner = nullptr;
  SysFs* sysfs = nullptr;
  ProcessTable* procs = nullptr;
  // Where nccl_env leaves environment for the next workload launch on this
  // node (common/host/launch_env.h); "" where no injector needs it.
  std::string launch_env_dir;
  // NVML; null where the host has none (the controller's validation, a fake
  // machine): GPU faults then fail when they would touch a GPU.
  Gpus* gpus = nullptr;
  // The TCP sockets' view (host/tcp_sockets.h) for per-link retransmission
  // counters; null: none are sampled.
  TcpSockets* tcp_sockets = nullptr;
  // The RDMA devices as libibverbs sees them (host/verbs.h); null where the
  // host has none to offer (the fake machine): ib_watch then watches nothing.
  Verbs* verbs = nullptr;
  // The kernel's links and qdiscs over rtnetlink (host/net_stack.h); null:
  // through `ip` and `tc` on `runner` (the tests' recording fakes, the fake
  // machine). The agent sets it.
  NetStack* net = nullptr;
};

}  // namespace fdrill

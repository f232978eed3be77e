// Workload: one supervised child process (the launcher, e.g. mpirun) in its
// own session and process group. Stop() sends SIGTERM to the group, then
// SIGKILL after the grace period. Only ever signals the group it started.
// Not thread-safe; polled from the agent's loop.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/core/result.h"
#include "common/core/units.h"

namespace fdrill {

class Workload {
 public:
  ~Workload();
  // Starts argv with env added to the agent's environment; stdout and stderr
  // go to log_path. Fails if one is already running.
  Status Start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               const std::string& log_path);
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // Exit status once the child has ended (128+signal when killed), else nullopt.
  std::optional<int> Poll();
  // Ends the child's process group; returns its exit status.
  std::optional<int> Stop(Duration grace);

 private:
  pid_t pid_ = -1;
};

}  // namespace fdrill

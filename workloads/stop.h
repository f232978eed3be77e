// Stop requests that arrive from outside the iteration loop: SIGTERM and
// SIGINT (the agent stopping the workload, or Ctrl-C), and a stop file the
// controller creates. The loop looks at both when the ranks next agree
// (runner.h: every ~10 ms), so a stop is always clean: the iteration in
// flight finishes, its record is written, the summary is printed.
// RequestStop/StopRequested are async-signal-safe and thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace fdrill {

// Installs handlers for SIGTERM and SIGINT that call RequestStop(). A second
// signal does not force anything: a collective cannot be left half-done, and
// the agent escalates to SIGKILL itself.
void InstallStopSignals();

void RequestStop();
bool StopRequested();
// Forgets an earlier request (tests run several loops in one process).
void ClearStopRequest();

// True when `path` exists (any kind of file). An empty path never exists.
bool StopFileExists(const std::string& path);

// Rank 0's look at the stop file in the timed loop, at most once per
// `every_ns` on the caller's monotonic clock: access() is a system call, and
// an iteration can take 50 us (bench/collective_fidelity.sh); the controller
// gives the job seconds to stop. Not thread-safe.
class StopFileWatch {
 public:
  StopFileWatch(std::string path, int64_t every_ns) : path_(std::move(path)), every_ns_(every_ns) {}
  // Looks when this is the first call or `every_ns` has passed since the
  // last look; a file once seen stays seen.
  bool Seen(int64_t now_ns);

 private:
  std::string path_;
  int64_t every_ns_;
  bool looked_ = false;
  bool seen_ = false;
  int64_t last_look_ns_ = 0;
};

}  // namespace fdrill

#include "workloads/stop.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace fdrill {

namespace {

// Lock-free, so reading and writing it from a signal handler is safe.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void OnSignal(int) { RequestStop(); }

}  // namespace

void InstallStopSignals() {
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: system calls inside the MPI/NCCL libraries resume instead of
  // failing with EINTR.
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

void RequestStop() { g_stop.store(true, std::memory_order_relaxed); }
bool StopRequested() { return g_stop.load(std::memory_order_relaxed); }
void ClearStopRequest() { g_stop.store(false, std::memory_order_relaxed); }

bool StopFileExists(const std::string& path) {
  return !path.empty() && access(path.c_str(), F_OK) == 0;
}

bool StopFileWatch::Seen(int64_t now_ns) {
  if (seen_ || path_.empty()) return seen_;
  if (looked_ && now_ns - last_look_ns_ < every_ns_) return false;
  looked_ = true;
  last_look_ns_ = now_ns;
  seen_ = StopFileExists(path_);
  return seen_;
}

}  // namespace fdrill

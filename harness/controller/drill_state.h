// DrillState: what a drill's threads share — the controller thread that walks
// the timeline, the io thread that delivers agent pushes, the lease thread,
// and a real cluster's launcher reader (LocalJob). `mu` guards the live
// monitor and every component's state named *Locked; `cv` is notified
// whenever something the controller thread waits for changes (a rank
// reported, the workload exited, the drill failed). Owned by the drill
// (drill.cc); components hold a reference and never outlive it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "harness/controller/live_localiser.h"
#include "harness/controller/live_monitor.h"

namespace fdrill {

struct DrillState {
  std::mutex mu;
  std::condition_variable cv;
  // The drill cannot go on (a lost agent or lease, a failed apply, revert or
  // relaunch): it cleans up and ends with status "error".
  std::atomic<bool> failed{false};
  const std::atomic<bool>* interrupt = nullptr;  // set by SIGINT/SIGTERM, or none
  // The live view the engine's gates and stop conditions read (guarded by
  // mu): one per workload, in Scenario::Workloads() order; empty until the
  // timeline starts, times relative to t0_wall_ns.
  std::vector<std::unique_ptr<LiveMonitor>> monitors;
  // Batches of records fed to the monitors so far (guarded by mu): the
  // controller thread looks for impact on each (TimelineWalker).
  uint64_t records_arrived = 0;
  int64_t t0_wall_ns = 0;
  // The live culprit (its own lock; fed by pushes, ticked by the walker).
  LiveLocaliser localiser;

  bool Interrupted() const { return interrupt != nullptr && interrupt->load(); }
  bool Aborted() const { return Interrupted() || failed.load(); }
  // Marks the drill failed and wakes the controller thread.
  void Fail() {
    failed = true;
    cv.notify_all();
  }
};

}  // namespace fdrill

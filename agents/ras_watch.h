// RasWatch: while an NCCL job runs on the node, asks its RAS service
// (common/host/nccl_ras.h) for the job's status every `interval` on a
// thread of its own, so a query that takes RAS's full 10 s never holds up
// the agent's requests, lease or faults. What changed since the last sample
// (healthy -> a process missing -> dead, or the service not answering) is
// queued, with the wall time it was seen, for AgentService::Tick to push as
// `ras` messages. Stops after `for_ms`, on Stop() or when destroyed.
//
// Stop() never waits: a query in flight (up to its 12 s timeout, against a
// service that accepts and says nothing) finishes on the detached thread,
// which then ends; the agent's revert on a lease lapse is never behind it.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "common/core/json.h"
#include "common/core/units.h"
#include "common/host/nccl_ras.h"

namespace fdrill {

class RasWatch {
 public:
  // Each sample: {wall_ns (system clock), answered, ras_status:
  // RasStatusJson | ras_error}.
  RasWatch(RasAddress address, Duration interval, Duration lasting);
  ~RasWatch() { Stop(); }
  RasWatch(const RasWatch&) = delete;
  RasWatch& operator=(const RasWatch&) = delete;

  void Stop();
  // The samples that differ from the one before, oldest first, since the
  // last call.
  std::vector<Json> TakeChanges();

  // What a sample is compared by: what it says of the job, not when.
  static Json Essence(const Json& sample);

 private:
  // Shared with the thread, which may outlive this object by one query.
  struct State {
    std::mutex mu;
    std::condition_variable wake;
    bool stop = false;
    Json last;  // the last sample's Essence
    std::vector<Json> changes;
  };
  static void Run(std::shared_ptr<State> state, RasAddress address, Duration interval,
                  Duration lasting);

  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace fdrill

// RasWatch: while an NCCL job runs on the node, asks its RAS service
// (harness/host/nccl_ras.h) for the job's status every `interval` on a
// thread of its own, so a query that takes RAS's full 10 s never holds up
// the agent's requests, lease or faults. What changed since the last sample
// (healthy -> a process missing -> dead, or the service not answering) is
// queued, with the wall time it was seen, for AgentService::Tick to push as
// `ras` messages. Stops after `for_ms`, on Stop() or when destroyed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "harness/core/clock.h"
#include "harness/core/json.h"
#include "harness/host/nccl_ras.h"

namespace fdrill {

class RasWatch {
 public:
  // Each sample: {wall_ns, answered, ras_status: RasStatusJson | ras_error}.
  RasWatch(RasAddress address, Duration interval, Duration lasting, const Clock& clock);
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
  void Run(Duration interval, Duration lasting);

  RasAddress address_;
  const Clock& clock_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  Json last_;  // the last sample's Essence
  std::vector<Json> changes_;
  std::thread thread_;
};

}  // namespace fdrill

// IbWatch: for as long as a drill runs on the node, listens to the async
// events of its RDMA devices (common/host/verbs.h: PORT_ERR when a port
// leaves ACTIVE, PORT_ACTIVE when it is back, LID_CHANGE, DEVICE_FATAL...)
// on a thread of its own, and queues each, with the wall time it was read,
// for AgentService::Tick to push as `ib_async` messages: the HCA's own word
// that a link flapped, next to what fdrill and NCCL's RAS saw. Stops after
// `lasting`, on Stop() or when destroyed.
//
// Stop() never waits: the thread owns the event source and is detached with
// the state it shares, so a source that does not return from Poll (a driver
// that hangs) never holds up the agent's requests, lease or reverts; the
// thread ends, and closes the devices, once its Poll returns. A source that
// fails ends the watch; the failure is logged once.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "common/core/units.h"
#include "common/host/verbs.h"

namespace fdrill {

class IbWatch {
 public:
  // How long one Poll waits: how soon a stopped watch's thread ends.
  static constexpr Duration kPollWait = std::chrono::milliseconds(200);

  IbWatch(std::unique_ptr<RdmaEventSource> source, Duration lasting);
  ~IbWatch() { Stop(); }
  IbWatch(const IbWatch&) = delete;
  IbWatch& operator=(const IbWatch&) = delete;

  void Stop();
  // The events read since the last call, oldest first.
  std::vector<RdmaAsyncEvent> TakeEvents();

 private:
  // Shared with the thread, which may outlive this object by one Poll.
  struct State {
    std::mutex mu;
    bool stop = false;
    std::vector<RdmaAsyncEvent> events;
  };
  static void Run(std::shared_ptr<State> state, std::unique_ptr<RdmaEventSource> source,
                  Duration lasting);

  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace fdrill

// Verbs (common/host/verbs.h) over libibverbs: ibv_get_device_list,
// ibv_open_device, ibv_query_device/ibv_query_port for the list, and each
// device context's async_fd, made non-blocking and close-on-exec, polled
// with poll(2) for events (ibv_get_async_event, then ibv_ack_async_event for
// each, as ibv_get_async_event(3) requires). Nothing is created on the device
// (no PD, QP or memory registration): opening a context only to listen is
// safe beside the job's own contexts, and across the agent's fork/exec of
// workloads (no registered memory, so no ibv_fork_init).
//
// Opening a device needs read/write on /dev/infiniband/uverbsN (root, or the
// rdma group where udev grants it); a device that cannot be opened is an
// error naming it.
#pragma once

#include "common/host/verbs.h"

namespace fdrill {

class RealVerbs final : public Verbs {
 public:
  Result<std::vector<VerbsDevice>> ListDevices() override;
  Result<std::unique_ptr<RdmaEventSource>> OpenEvents() override;
};

}  // namespace fdrill

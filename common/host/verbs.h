// The node's RDMA devices as libibverbs sees them (rdma-core): which devices
// and ports there are, and the asynchronous events their hardware reports.
// The real implementation (common/host/real_verbs.h) is the only code that
// links libibverbs; tests use tests/fakes/fake_verbs.h.
//
// Hardware facts (rdma-core's ibv_get_async_event(3), ibv_query_port(3)):
//   - port and device events (PORT_ERR, PORT_ACTIVE, LID_CHANGE, PKEY_CHANGE,
//     SM_CHANGE, CLIENT_REREGISTER, GID_CHANGE, DEVICE_FATAL) are
//     "unaffiliated": every open context of the device receives them, so a
//     context opened only to listen sees the flap the job's NCCL sees.
//     QP/CQ/SRQ events go only to the context owning the object; a listener
//     that creates none never gets them.
//   - PORT_ERR is raised when a port leaves ACTIVE (link down, or the SM or a
//     switch disabled the other end); PORT_ACTIVE when it is ACTIVE again.
//   - without RDMA in the kernel (no CONFIG_INFINIBAND, no ib_uverbs)
//     ibv_get_device_list fails with ENOSYS: that is "no devices", not an
//     error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/core/result.h"
#include "common/core/units.h"

namespace fdrill {

struct VerbsPort {
  int port = 0;            // 1-based, as ibv_query_port numbers them
  std::string state;       // "ACTIVE", "DOWN", "INIT", "ARMED", as sysfs's ports/N/state
  int phys_state = 0;      // IB spec PortPhysicalState: 2 Polling, 3 Disabled, 5 LinkUp
  int lid = 0;             // 0 on RoCE, which has no LIDs
  std::string link_layer;  // "InfiniBand" | "Ethernet"
};

struct VerbsDevice {
  std::string name;  // "mlx5_0"
  std::vector<VerbsPort> ports;
};

struct RdmaAsyncEvent {
  std::string device;  // "mlx5_0"
  int port = 0;        // the port a port event is about; 0 for a device event
  // "PORT_ERR", "PORT_ACTIVE", "LID_CHANGE", "PKEY_CHANGE", "SM_CHANGE",
  // "CLIENT_REREGISTER", "GID_CHANGE", "DEVICE_FATAL" (IBV_EVENT_ without
  // the prefix); another type as ibv_event_type_str words it.
  std::string event;
  int64_t wall_ns = 0;  // the system clock when the event was read
};

// The async events of every RDMA device that was present when it was
// opened. Owned by one thread at a time.
class RdmaEventSource {
 public:
  virtual ~RdmaEventSource() = default;
  // Waits at most `wait` for events and returns those that arrived (each
  // acknowledged to the library), oldest first; empty when none came.
  // Never blocks longer than `wait`. An error when the source can no longer
  // be read (every device gone).
  virtual Result<std::vector<RdmaAsyncEvent>> Poll(Duration wait) = 0;
  // The devices being listened to.
  virtual std::vector<std::string> Devices() const = 0;
};

class Verbs {
 public:
  virtual ~Verbs() = default;
  // Every RDMA device with each port's state; empty (not an error) on a
  // machine without RDMA.
  virtual Result<std::vector<VerbsDevice>> ListDevices() = 0;
  // Opens every device for its async events. A source with no devices when
  // there are none.
  virtual Result<std::unique_ptr<RdmaEventSource>> OpenEvents() = 0;
};

}  // namespace fdrill

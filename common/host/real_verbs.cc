#include "common/host/real_verbs.h"

#include <fcntl.h>
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <infiniband/verbs.h>

namespace fdrill {

namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// As sysfs's ports/N/state words it (drivers/infiniband/core/sysfs.c).
std::string PortState(ibv_port_state state) {
  switch (state) {
    case IBV_PORT_DOWN:
      return "DOWN";
    case IBV_PORT_INIT:
      return "INIT";
    case IBV_PORT_ARMED:
      return "ARMED";
    case IBV_PORT_ACTIVE:
      return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
      return "ACTIVE_DEFER";
    default:
      return "NOP";
  }
}

// IBV_LINK_LAYER_UNSPECIFIED comes from drivers older than RoCE: InfiniBand.
std::string LinkLayer(uint8_t layer) {
  return layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
}

std::string EventName(ibv_event_type type) {
  switch (type) {
    case IBV_EVENT_PORT_ERR:
      return "PORT_ERR";
    case IBV_EVENT_PORT_ACTIVE:
      return "PORT_ACTIVE";
    case IBV_EVENT_LID_CHANGE:
      return "LID_CHANGE";
    case IBV_EVENT_PKEY_CHANGE:
      return "PKEY_CHANGE";
    case IBV_EVENT_SM_CHANGE:
      return "SM_CHANGE";
    case IBV_EVENT_CLIENT_REREGISTER:
      return "CLIENT_REREGISTER";
    case IBV_EVENT_GID_CHANGE:
      return "GID_CHANGE";
    case IBV_EVENT_DEVICE_FATAL:
      return "DEVICE_FATAL";
    default:
      return ibv_event_type_str(type);
  }
}

// element.port_num is valid for these only (ibv_get_async_event(3)).
bool IsPortEvent(ibv_event_type type) {
  return type == IBV_EVENT_PORT_ERR || type == IBV_EVENT_PORT_ACTIVE ||
         type == IBV_EVENT_LID_CHANGE || type == IBV_EVENT_PKEY_CHANGE ||
         type == IBV_EVENT_SM_CHANGE || type == IBV_EVENT_CLIENT_REREGISTER ||
         type == IBV_EVENT_GID_CHANGE;
}

using DeviceList = std::unique_ptr<ibv_device*[], void (*)(ibv_device**)>;
using Context = std::unique_ptr<ibv_context, int (*)(ibv_context*)>;

// Every device; an empty list where the kernel has no RDMA (ENOSYS).
Result<DeviceList> Devices(int* n) {
  errno = 0;
  DeviceList list(ibv_get_device_list(n), ibv_free_device_list);
  if (list == nullptr) {
    if (errno != ENOSYS) return Unavailable(Errno("ibv_get_device_list"));
    *n = 0;
  }
  return list;
}

Result<Context> Open(ibv_device* device) {
  Context ctx(ibv_open_device(device), ibv_close_device);
  if (ctx == nullptr) {
    return Unavailable(Errno(std::string("ibv_open_device ") + ibv_get_device_name(device)));
  }
  return ctx;
}

class RealEventSource final : public RdmaEventSource {
 public:
  struct Device {
    std::string name;
    Context ctx;
  };
  explicit RealEventSource(std::vector<Device> devices) : devices_(std::move(devices)) {}

  std::vector<std::string> Devices() const override {
    std::vector<std::string> names;
    for (const Device& d : devices_) names.push_back(d.name);
    return names;
  }

  Result<std::vector<RdmaAsyncEvent>> Poll(Duration wait) override {
    std::vector<RdmaAsyncEvent> events;
    const int ms =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(wait).count());
    if (devices_.empty()) {
      if (lost_)
        return Unavailable("every RDMA device listened to is gone (DEVICE_FATAL or removed)");
      poll(nullptr, 0, ms);  // nothing to listen to: wait all the same, as promised
      return events;
    }
    std::vector<pollfd> fds;
    for (const Device& d : devices_) fds.push_back({d.ctx->async_fd, POLLIN, 0});
    const int ready = poll(fds.data(), fds.size(), ms);
    if (ready < 0 && errno != EINTR) return Unavailable(Errno("poll of the RDMA async fds"));
    std::vector<bool> gone(devices_.size(), false);
    for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
      if (fds[i].revents & POLLIN) gone[i] = Drain(devices_[i], &events);
      if (fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) gone[i] = true;
    }
    // A device gone is closed and no longer listened to; its last events
    // are delivered now, and a Poll with none left says so.
    for (size_t i = devices_.size(); i-- > 0;) {
      if (!gone[i]) continue;
      devices_.erase(devices_.begin() + static_cast<long>(i));
      lost_ = true;
    }
    return events;
  }

 private:
  // Reads every pending event of `d`; true when the device is done for
  // (DEVICE_FATAL: its context is unusable from then on).
  static bool Drain(Device& d, std::vector<RdmaAsyncEvent>* out) {
    bool fatal = false;
    ibv_async_event event{};
    while (ibv_get_async_event(d.ctx.get(), &event) == 0) {
      const int64_t wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
      out->push_back({.device = d.name,
                      .port = IsPortEvent(event.event_type) ? event.element.port_num : 0,
                      .event = EventName(event.event_type),
                      .wall_ns = wall_ns});
      fatal = fatal || event.event_type == IBV_EVENT_DEVICE_FATAL;
      ibv_ack_async_event(&event);
    }
    return fatal;  // EAGAIN: drained
  }

  std::vector<Device> devices_;
  bool lost_ = false;  // a device was dropped
};

}  // namespace

Result<std::vector<VerbsDevice>> RealVerbs::ListDevices() {
  int n = 0;
  auto list = Devices(&n);
  if (!list.ok()) return list.status();
  std::vector<VerbsDevice> out;
  for (int i = 0; i < n; ++i) {
    auto ctx = Open((*list)[i]);
    if (!ctx.ok()) return ctx.status();
    VerbsDevice device{.name = ibv_get_device_name((*list)[i])};
    ibv_device_attr attr{};
    if (int rc = ibv_query_device(ctx->get(), &attr); rc != 0) {
      errno = rc;
      return Unavailable(Errno("ibv_query_device " + device.name));
    }
    for (int p = 1; p <= attr.phys_port_cnt; ++p) {
      ibv_port_attr port{};
      if (int rc = ibv_query_port(ctx->get(), static_cast<uint8_t>(p), &port); rc != 0) {
        errno = rc;
        return Unavailable(Errno("ibv_query_port " + device.name + " " + std::to_string(p)));
      }
      device.ports.push_back({.port = p,
                              .state = PortState(port.state),
                              .phys_state = port.phys_state,
                              .lid = port.lid,
                              .link_layer = LinkLayer(port.link_layer)});
    }
    out.push_back(std::move(device));
  }
  return out;
}

Result<std::unique_ptr<RdmaEventSource>> RealVerbs::OpenEvents() {
  int n = 0;
  auto list = Devices(&n);
  if (!list.ok()) return list.status();
  std::vector<RealEventSource::Device> devices;
  for (int i = 0; i < n; ++i) {
    auto ctx = Open((*list)[i]);
    if (!ctx.ok()) return ctx.status();
    const int fd = (*ctx)->async_fd;
    // Non-blocking, so Poll waits in poll(2) with a deadline and then drains;
    // close-on-exec, so no workload the agent starts holds the device open.
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
        fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
      return Unavailable(Errno(std::string("the async fd of ") + ibv_get_device_name((*list)[i])));
    }
    devices.push_back({ibv_get_device_name((*list)[i]), std::move(*ctx)});
  }
  return std::unique_ptr<RdmaEventSource>(std::make_unique<RealEventSource>(std::move(devices)));
}

}  // namespace fdrill

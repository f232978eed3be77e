// AgentService's ib_watch request (docs/reference/protocol.md "ib_watch"): listen to
// the async events of this node's RDMA devices (agents/ib_watch.h) and push
// each (`ib_async` pushes, from Tick). Reads only: a context opened to
// listen creates nothing on the device. A node without RDMA devices (or an
// agent on the fake machine, host_.verbs null) answers watching: false.
#include "agents/agent_service.h"
#include "common/host/verbs.h"
#include "common/wire/protocol.h"

namespace fdrill {

namespace {

Json DevicesJson(const std::vector<VerbsDevice>& devices) {
  namespace key = proto::key;
  Json out = Json::array();
  for (const VerbsDevice& d : devices) {
    Json ports = Json::array();
    for (const VerbsPort& p : d.ports) {
      ports.push_back({{key::kPort, p.port},
                       {key::kState, p.state},
                       {key::kPhysState, p.phys_state},
                       {key::kLid, p.lid},
                       {key::kLinkLayer, p.link_layer}});
    }
    out.push_back({{key::kName, d.name}, {key::kPorts, std::move(ports)}});
  }
  return out;
}

}  // namespace

Result<Json> AgentService::IbWatchRequest(const Json& req) {
  namespace key = proto::key;
  if (req.value(key::kStop, false)) {
    const bool was = ib_ != nullptr;
    ib_.reset();
    return Json{{key::kWatching, false}, {key::kStop, was}};
  }
  int64_t for_ms = 3600000;
  if (auto it = req.find(key::kForMs); it != req.end()) {
    constexpr int64_t kWeek = 7 * 86400000LL;
    if (!it->is_number_integer() || (it->is_number_unsigned() && it->get<uint64_t>() > kWeek) ||
        it->get<int64_t>() < 1 || it->get<int64_t>() > kWeek) {
      return InvalidArgument("ib_watch \"for_ms\" must be an integer 1.." + std::to_string(kWeek));
    }
    for_ms = it->get<int64_t>();
  }
  ib_.reset();  // one watch at a time: a new request replaces the old
  if (host_.verbs == nullptr) return Json{{key::kWatching, false}, {key::kDevices, Json::array()}};
  auto devices = host_.verbs->ListDevices();
  if (!devices.ok()) return devices.status().Annotate("ib_watch");
  if (devices->empty()) return Json{{key::kWatching, false}, {key::kDevices, Json::array()}};
  auto source = host_.verbs->OpenEvents();
  if (!source.ok()) return source.status().Annotate("ib_watch");
  ib_ = std::make_unique<IbWatch>(std::move(*source), std::chrono::milliseconds(for_ms));
  return Json{{key::kWatching, true}, {key::kDevices, DevicesJson(*devices)}};
}

void AgentService::PushIbEvents() {
  if (ib_ == nullptr) return;
  namespace key = proto::key;
  for (const RdmaAsyncEvent& e : ib_->TakeEvents()) {
    SendPush(MakePush(proto::kIbAsync, {{key::kNode, config_.node},
                                        {key::kDevice, e.device},
                                        {key::kPort, e.port},
                                        {key::kEvent, e.event},
                                        {key::kWallNs, e.wall_ns}}));
  }
}

}  // namespace fdrill

// AgentService's ras_watch request (docs/reference/protocol.md "ras_watch"): watch the
// NCCL job's RAS service on this node (agents/ras_watch.h) and push what it
// says as it changes (`ras` pushes, from Tick). Reads only; it connects to
// this node's own addresses and nowhere else, whatever the request says.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstring>

#include "agents/agent_service.h"
#include "common/wire/protocol.h"

namespace fdrill {

namespace {

// "localhost", a loopback address, or an address of one of this node's
// interfaces (getifaddrs: the agent's network namespace).
Status IsThisNodesAddress(const std::string& host) {
  if (host == "localhost") return Status::Ok();
  in_addr v4{};
  in6_addr v6{};
  const bool is4 = inet_pton(AF_INET, host.c_str(), &v4) == 1;
  const bool is6 = !is4 && inet_pton(AF_INET6, host.c_str(), &v6) == 1;
  if (!is4 && !is6) {
    return InvalidArgument(
        "ras_watch \"ras_addr\": the host must be localhost or a numeric "
        "address of this node, not \"" +
        host + "\"");
  }
  if ((is4 && (ntohl(v4.s_addr) >> 24) == 127) || (is6 && IN6_IS_ADDR_LOOPBACK(&v6)))
    return Status::Ok();
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0)
    return Unavailable(std::string("getifaddrs: ") + std::strerror(errno));
  bool found = false;
  for (ifaddrs* a = list; a != nullptr && !found; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    if (is4 && a->ifa_addr->sa_family == AF_INET) {
      found = reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr == v4.s_addr;
    } else if (is6 && a->ifa_addr->sa_family == AF_INET6) {
      found = std::memcmp(&reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr, &v6,
                          sizeof(v6)) == 0;
    }
  }
  freeifaddrs(list);
  if (!found) {
    return PermissionDenied("ras_watch \"ras_addr\": " + host +
                            " is not an address of this node; the agent asks only its own "
                            "node's NCCL RAS service");
  }
  return Status::Ok();
}

Result<int64_t> Millis(const Json& req, const char* key, int64_t absent, int64_t low,
                       int64_t high) {
  auto it = req.find(key);
  if (it == req.end()) return absent;
  if (!it->is_number_integer() || it->get<int64_t>() < low || it->get<int64_t>() > high ||
      (it->is_number_unsigned() && it->get<uint64_t>() > INT64_MAX)) {
    return InvalidArgument("ras_watch \"" + std::string(key) + "\" must be an integer " +
                           std::to_string(low) + ".." + std::to_string(high));
  }
  return it->get<int64_t>();
}

}  // namespace

Result<Json> AgentService::RasWatchRequest(const Json& req) {
  namespace key = proto::key;
  if (req.value(key::kStop, false)) {
    const bool was = ras_ != nullptr;
    ras_.reset();
    return Json{{key::kWatching, false}, {key::kStop, was}};
  }
  const std::string addr = req.value(key::kRasAddr, "localhost:28028");
  auto address = RasAddressFromEnv({{"NCCL_RAS_ADDR", addr}});
  if (!address.ok()) return address.status().Annotate("ras_watch \"ras_addr\"");
  if (Status s = IsThisNodesAddress(address->host); !s.ok()) return s;
  auto interval = Millis(req, key::kIntervalMs, 1000, 100, 60000);
  if (!interval.ok()) return interval.status();
  auto lasting = Millis(req, key::kForMs, 3600000, 1, 7 * 86400000LL);
  if (!lasting.ok()) return lasting.status();
  ras_.reset();  // one watch at a time: a new request replaces the old
  ras_ = std::make_unique<RasWatch>(*address, std::chrono::milliseconds(*interval),
                                    std::chrono::milliseconds(*lasting));
  return Json{{key::kWatching, true}, {key::kRasAddr, addr}};
}

void AgentService::PushRasChanges() {
  if (ras_ == nullptr) return;
  for (Json& change : ras_->TakeChanges()) {
    change[proto::key::kNode] = config_.node;
    SendPush(MakePush(proto::kRas, std::move(change)));
  }
}

}  // namespace fdrill

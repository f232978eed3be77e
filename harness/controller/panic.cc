#include "harness/controller/panic.h"

#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <future>
#include <thread>

#include "harness/controller/agent_link.h"
#include "harness/tls/tls_config.h"

namespace fdrill {

namespace {

Status PanicOne(boost::asio::io_context& io, const FabricNode& node, const TlsConfig* tls, Duration timeout) {
  AgentLink link(io, node.name, node.MgmtIp(), static_cast<uint16_t>(node.agent_port), tls);
  if (auto s = link.Connect(timeout); !s.ok()) return s;
  auto stop = link.Call("workload_stop", {}, timeout + std::chrono::seconds(10));
  auto reverted = link.Call("revert_all", {}, timeout);
  auto released = link.Call("lease", {{"ttl_ms", 0}}, timeout);
  link.Close();
  if (!reverted.ok()) return reverted.status();
  if (!stop.ok()) return stop.status().Annotate("workload_stop");
  return released.ok() ? Status::Ok() : released.status().Annotate("lease release");
}

}  // namespace

std::vector<PanicOutcome> PanicAll(const FabricState& fabric, const std::string& tls_dir, bool insecure,
                                   Duration timeout) {
  std::vector<PanicOutcome> out;
  auto tls = ControllerTls(tls_dir, insecure, fabric.pki_dir);
  if (!tls.ok()) {
    for (const auto& n : fabric.nodes) out.push_back({n.name, tls.status()});
    return out;
  }
  const TlsConfig* config = tls->has_value() ? &**tls : nullptr;
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });
  std::vector<std::future<Status>> pending;
  for (const auto& n : fabric.nodes) {
    pending.push_back(std::async(std::launch::async, [&, node = &n] { return PanicOne(io, *node, config, timeout); }));
  }
  for (size_t i = 0; i < pending.size(); ++i) out.push_back({fabric.nodes[i].name, pending[i].get()});
  work.reset();
  io.stop();
  io_thread.join();
  return out;
}

}  // namespace fdrill

#include "agents/metrics_endpoint.h"

#include "agents/counters.h"
#include "harness/core/log.h"
#include "injectors/injector.h"

namespace fdrill {

namespace asio = boost::asio;

MetricsEndpoint::MetricsEndpoint(asio::io_context& io, const AgentService& service, Host host,
                                 const Clock& clock, std::string node, std::string version,
                                 TelemetrySources sources, Duration sample_every)
    : io_(io),
      service_(service),
      host_(host),
      clock_(clock),
      node_(std::move(node)),
      version_(std::move(version)),
      sources_(std::move(sources)),
      sample_every_(sample_every),
      server_(io, [this] { return RenderPrometheus(Snapshot()); }),
      timer_(io) {}

void MetricsEndpoint::Start() {
  server_.Start();
  asio::co_spawn(io_, SampleLoop(), asio::detached);
}

void MetricsEndpoint::Stop() {
  stopped_ = true;
  server_.Stop();
  timer_.cancel();
}

AgentMetricsSnapshot MetricsEndpoint::Snapshot() const {
  AgentMetricsSnapshot s;
  s.node = node_;
  s.version = version_;
  for (const InjectorInfo& info : Injectors()) s.faults_active[info.name] = 0;
  for (const auto& [kind, n] : service_.active_fault_kinds()) s.faults_active[kind] = n;
  s.lease_active = service_.lease_held();
  s.workload_running = service_.workload_running();
  s.counters = counters_;
  if (sampled_at_)
    s.sample_age_s = std::chrono::duration<double>(clock_.Now() - *sampled_at_).count();
  return s;
}

asio::awaitable<void> MetricsEndpoint::SampleLoop() {
  bool warned = false;
  while (!stopped_) {
    auto sample = SampleTelemetry(*host_.runner, host_.sysfs, sources_);
    if (sample.ok()) {
      counters_ = std::move(sample).value();
      sampled_at_ = clock_.Now();
      warned = false;
    } else if (!warned) {
      spdlog::warn("metrics endpoint: counters: {}", sample.status().message());
      warned = true;  // once per failing streak, not once a second
    }
    timer_.expires_after(sample_every_);
    boost::system::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

}  // namespace fdrill

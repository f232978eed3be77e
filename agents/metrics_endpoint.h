// MetricsEndpoint: fdrill-agent's --metrics-listen. Samples the node's
// telemetry (agents/counters.h: netdev, IB port, NVLink) every
// `sample_every` (--telemetry-interval) whether or not a workload
// runs, and serves them with the agent's state (faults per kind, lease,
// workload) as Prometheus text on a MetricsHttpServer. Everything runs on the
// agent's io_context thread; the service is only read.
//
// SampleTelemetry may start `tc` (a short child process) per sample, as the
// agent's own once-a-second counters event already does; a failed sample
// keeps the previous one, whose age fdrill_counters_sample_age_seconds shows.
#pragma once

#include <string>

#include "agents/agent_service.h"
#include "agents/counters.h"
#include "agents/metrics_http.h"
#include "agents/prometheus.h"

namespace fdrill {

class MetricsEndpoint {
 public:
  MetricsEndpoint(boost::asio::io_context& io, const AgentService& service, Host host,
                  const Clock& clock, std::string node, std::string version,
                  TelemetrySources sources, Duration sample_every);
  Status Listen(const std::string& host, uint16_t port) { return server_.Listen(host, port); }
  uint16_t port() const { return server_.port(); }
  void Start();
  void Stop();

  // What /metrics renders now (every registered fault kind, 0 when idle).
  AgentMetricsSnapshot Snapshot() const;

 private:
  boost::asio::awaitable<void> SampleLoop();

  boost::asio::io_context& io_;
  const AgentService& service_;
  Host host_;
  const Clock& clock_;
  std::string node_, version_;
  TelemetrySources sources_;
  Duration sample_every_;
  MetricsHttpServer server_;
  boost::asio::steady_timer timer_;
  bool stopped_ = false;
  Json counters_ = Json::object();
  std::optional<Clock::TimePoint> sampled_at_;
};

}  // namespace fdrill

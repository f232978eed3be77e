// MetricsEndpoint: fdrill-agent's --metrics-listen. Serves the node's
// telemetry (agents/counters.h: netdev, IB port, NVLink, TCP, rank CPU) with
// the agent's state (faults per kind, lease, workload) as Prometheus text on
// a MetricsHttpServer. It samples nothing itself: the service takes one
// sample per --telemetry-interval (AgentService::KeepSampling, which Start
// turns on, so an idle node is sampled too) and the same sample feeds the
// `counters` push. Everything runs on the agent's io_context thread; the
// service is only read. A failed sample keeps the previous one, whose age
// fdrill_counters_sample_age_seconds shows.
#pragma once

#include <string>

#include "agents/agent_service.h"
#include "agents/counters.h"
#include "agents/metrics_http.h"
#include "agents/prometheus.h"

namespace fdrill {

class MetricsEndpoint {
 public:
  MetricsEndpoint(boost::asio::io_context& io, AgentService& service, const Clock& clock,
                  std::string node, std::string version);
  Status Listen(const std::string& host, uint16_t port) { return server_.Listen(host, port); }
  uint16_t port() const { return server_.port(); }
  void Start();
  void Stop();

  // What /metrics renders now (every registered fault kind, 0 when idle).
  AgentMetricsSnapshot Snapshot() const;

 private:
  AgentService& service_;
  const Clock& clock_;
  std::string node_, version_;
  MetricsHttpServer server_;
};

}  // namespace fdrill

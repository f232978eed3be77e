#include "agents/metrics_endpoint.h"

#include "agents/counters.h"
#include "common/core/log.h"
#include "injectors/injector.h"

namespace fdrill {

namespace asio = boost::asio;

MetricsEndpoint::MetricsEndpoint(asio::io_context& io, AgentService& service, const Clock& clock,
                                 std::string node, std::string version)
    : service_(service),
      clock_(clock),
      node_(std::move(node)),
      version_(std::move(version)),
      server_(io, [this] { return RenderPrometheus(Snapshot()); }) {}

void MetricsEndpoint::Start() {
  service_.KeepSampling(true);
  server_.Start();
}

void MetricsEndpoint::Stop() {
  server_.Stop();
  service_.KeepSampling(false);
}

AgentMetricsSnapshot MetricsEndpoint::Snapshot() const {
  AgentMetricsSnapshot s;
  s.node = node_;
  s.version = version_;
  for (const InjectorInfo& info : Injectors()) s.faults_active[info.name] = 0;
  for (const auto& [kind, n] : service_.active_fault_kinds()) s.faults_active[kind] = n;
  s.lease_active = service_.lease_held();
  s.workload_running = service_.workload_running();
  s.journal_writable = service_.journal_error().empty();
  s.audit_writable = service_.audit_error().empty();
  s.panic_latched = service_.panic_latched();
  s.counters = service_.latest_telemetry();
  if (auto at = service_.telemetry_sampled_at())
    s.sample_age_s = std::chrono::duration<double>(clock_.Now() - *at).count();
  return s;
}

}  // namespace fdrill

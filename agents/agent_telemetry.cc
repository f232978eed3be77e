// AgentService's telemetry (agent_service.h): the counters sample each
// telemetry interval, pushed (whole or as a delta) while a drill owns the
// node or a run is watched, kept for /metrics; and the ranks' new records.
#include "agents/agent_service.h"
#include "agents/counters.h"
#include "common/core/log.h"
#include "common/wire/protocol.h"

namespace fdrill {

Gpus* AgentService::TelemetryGpus() {
  if (!telemetry_gpus_tried_ && host_.gpus != nullptr) {
    telemetry_gpus_tried_ = true;
    if (auto s = host_.gpus->Load(); s.ok()) {
      telemetry_gpus_ = host_.gpus;
    } else {
      spdlog::info("no NVLink counters in telemetry: {}", s.message());
    }
  }
  return telemetry_gpus_;
}

void AgentService::SampleCounters(Clock::TimePoint now) {
  const Duration every = config_.telemetry_interval;
  // Counters pushed while a drill owns the node (a switch's agent has no
  // workload to watch) or a workload's run is watched; sampled then, or
  // always when /metrics is served. One sample feeds both.
  const bool push_counters = tail_.watching() || lease_.held();
  if ((push_counters || keep_sampling_) && now - last_counters_ >= every) {
    // On a grid of the interval, not one interval after whenever the tick
    // landed: with a 100 ms idle tick the latter drifts (1 s -> 1.1 s). The
    // grid is this node's own (SampleGridPoint): the first sample is at
    // once, the next at the node's next grid point.
    last_counters_ = now - last_counters_ < 2 * every ? last_counters_ + every
                                                      : SampleGridPoint(now, every, config_.node);
    TelemetrySources sources;
    sources.mgmt_interface = config_.mgmt_interface;
    sources.gpus = TelemetryGpus();
    if (tcp_links_ == nullptr && host_.tcp_sockets != nullptr)
      tcp_links_ = std::make_unique<TcpLinkRetrans>(*host_.tcp_sockets);
    sources.tcp_links = tcp_links_.get();
    sources.net = host_.net;
    auto counters = SampleTelemetry(*host_.runner, host_.sysfs, sources);
    if (counters.ok()) {
      // Ranks run only while a drill does; an idle node's /proc is not walked.
      if (push_counters && rank_cpu_ != nullptr) rank_cpu_->Sample(*counters);
      telemetry_ = std::move(*counters);
      telemetry_at_ = now;
      telemetry_warned_ = false;
      if (push_counters && push_) {
        CountersDelta::Push p = counters_delta_.Next(telemetry_);
        Json body = {{proto::key::kNode, config_.node},
                     {proto::key::kCounters, std::move(p.counters)}};
        if (p.delta) body[proto::key::kDelta] = true;
        if (lease_ack_) {
          body[proto::key::kLeaseAck] = lease_ack_->renewal;
          body[proto::key::kDrill] = lease_ack_->drill;
          lease_ack_.reset();
        }
        SendPush(MakePush(proto::kCounters, std::move(body)));
      }
    } else if (!telemetry_warned_) {
      spdlog::warn("counters: {}", counters.status().message());
      telemetry_warned_ = true;  // once per failing streak, not once a second
    }
  }
}

void AgentService::PushMetrics() {
  if (!tail_.watching()) return;
  last_tail_ = clock_.Now();
  auto records = tail_.Poll();
  if (!records.empty())
    SendPush(MakePush(proto::kMetrics,
                      {{proto::key::kNode, config_.node}, {proto::key::kRecords, records}}));
}

}  // namespace fdrill

// The agent's timer: how soon it wants to run again (TickInterval) and what
// each run does (Tick): a fault's next edge or max duration, a lapsed lease,
// the RAS and IB event pushes, the workload's exit, counters, the owed
// lease_ack and the metrics tail. agent_service.cc has the requests.
#include <algorithm>

#include "agents/agent_service.h"
#include "common/core/json.h"
#include "common/core/log.h"
#include "common/wire/protocol.h"

namespace fdrill {

namespace {
// Whenever a metrics file changes (AgentServer's MetricsWatch): the
// controller's live view (gates, stop conditions, the impact_seen
// detection) lags the ranks by a round trip. Where inotify is unavailable,
// every busy tick: by at most this. With a watch, the tick's look is only a
// backstop: a job that prints a step line a few times a second is not woken
// for 50 times a second (bench/job_fidelity.sh).
constexpr auto kTailEvery = std::chrono::milliseconds(20);
constexpr auto kTailBackstop = std::chrono::seconds(1);
}  // namespace

Duration AgentService::TickInterval() const {
  Duration interval = workload_.running() ? kBusyTick : kIdleTick;
  const auto now = clock_.Now();
  // A lease_ack push owed: no later than when it is due.
  if (lease_ack_) {
    interval = std::min(
        interval, std::max(Duration::zero(), lease_ack_->due - now) + std::chrono::milliseconds(1));
  }
  if (faults_.empty()) return interval;
  // Lapsed is "past the deadline": wake just after it.
  if (lease_.held() && lease_.deadline() >= now)
    interval = std::min(interval, lease_.deadline() - now + std::chrono::milliseconds(1));
  for (const auto& [id, active] : faults_) {
    const Duration on = now - active.applied_at;
    // The first change after the state was last set — by the last Tick, or
    // by the apply when that came later — not after now: an edge that
    // passed since (the tick loop woke a few microseconds before a flap's
    // up edge, Tick saw it still ahead, and now it is behind) is due at
    // once. Counted from now it was not seen at all and the up edge waited
    // a whole idle tick: a 100 ms flap measured 197.7 ms on the wire in 1
    // of ~200 (bench/agent_bench.sh, 2026-12-05).
    const Duration seen = std::max(last_tick_, active.applied_at) - active.applied_at;
    auto due = active.fault->NextChange(seen);
    if (active.max_duration.count() > 0 && (!due || active.max_duration < *due))
      due = active.max_duration;
    // Only what the last look had still ahead: an overdue change it already
    // tried (a revert at max duration that failed and is retried) keeps the
    // cadence instead of spinning.
    if (due && *due > seen) interval = std::min(interval, std::max(Duration::zero(), *due - on));
  }
  return interval;
}

void AgentService::Tick() {
  auto now = clock_.Now();
  last_tick_ = now;
  // The deadlines first, before anything that reads the outside world or
  // pushes: the lease's lapse, then each fault's max duration. Pushes never
  // throw (Push below), and an exception from anything else ends the
  // agent (AgentServer::TickLoop) so its supervisor and journal sweep take
  // over; nothing stands between a deadline and its revert.
  if (lease_.Lapsed(now)) LapseLease();
  for (auto it = faults_.begin(); it != faults_.end();) {
    auto& [id, active] = *it;
    Duration on = now - active.applied_at;
    if (active.max_duration.count() > 0 && on >= active.max_duration) {
      Status s = RevertOne(id, active);
      spdlog::warn("fault {} reached its max duration {}: reverted ({})", id,
                   FormatDuration(active.max_duration), s.ToString());
      SendPush(MakePush(proto::kFaultExpired, {{proto::key::kNode, config_.node},
                                               {proto::key::kFaultId, id},
                                               {proto::key::kReverted, s.ok()}}));
      if (s.ok()) {
        it = faults_.erase(it);
        continue;
      }
    } else if (auto s = active.fault->Tick(on); !s.ok()) {
      spdlog::error("fault {}: {}", id, s.ToString());
    }
    ++it;
  }
  // A journal that could not be written (a full state directory) is tried
  // again once a second: once it can be, faults are accepted again.
  if (!journal_error_.empty() && now - journal_retry_at_ >= std::chrono::seconds(1)) RetryJournal();
  PushRasChanges();
  PushIbEvents();
  if (auto code = workload_.Poll()) {
    auto last = tail_.Poll(SIZE_MAX);  // the ranks' last lines before the exit
    if (!last.empty())
      SendPush(MakePush(proto::kMetrics,
                        {{proto::key::kNode, config_.node}, {proto::key::kRecords, last}}));
    SendPush(MakePush(proto::kWorkloadExit, {{proto::key::kNode, config_.node},
                                             {proto::key::kExitCode, *code},
                                             {proto::key::kLogTail, LogTail()}}));
  }
  SampleCounters(now);  // carries an owed lease_ack when it pushes
  if (lease_ack_ && now >= lease_ack_->due) {
    SendPush(MakePush(proto::kLeaseAck, {{proto::key::kNode, config_.node},
                                         {proto::key::kLeaseAck, lease_ack_->renewal},
                                         {proto::key::kDrill, lease_ack_->drill}}));
    lease_ack_.reset();
  }
  if (tail_.watching() && now - last_tail_ >= (metrics_watched_ ? kTailBackstop : kTailEvery))
    PushMetrics();
}

void AgentService::LapseLease() {
  lease_.Break();
  lease_ack_.reset();  // the lapse is what the controller hears of
  RevertEverything("the controller's lease lapsed");
  SendPush(MakePush(proto::kLeaseExpired, {{proto::key::kNode, config_.node}}));
}

void AgentService::SendPush(Json msg) {
  if (!push_) return;
  // Serialising cannot throw (DumpJson); a receiver's own failure (a
  // session's allocation) must not stop the tick that called it.
  const std::string type = RequestType(msg);
  try {
    push_(std::move(msg));
  } catch (const std::exception& e) {
    spdlog::error("push {} failed: {}", type, e.what());
  }
}

}  // namespace fdrill

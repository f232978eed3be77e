// AgentService: what an agent does, with no sockets. Requests come in as wire
// messages, replies go out; Tick() is called every few ms from the same
// thread and drives time-varying faults, the lease, the workload and the
// metrics tail. Messages the agent originates (proto::kPushTypes: metrics,
// counters, workload_exit, fault_expired, lease_expired) go through the push
// callback. Single-threaded.
//
// Requests (docs/reference/protocol.md; proto::kRequestTypes, common/wire/protocol.h):
// hello, check, snapshot, apply, revert, revert_all, lease, workload_start,
// workload_stop, inventory (reads only: agents/inventory.h plus "node"),
// run_dir_remove, panic_clear, ras_watch (agents/agent_ras.cc), ib_watch
// (agents/agent_ib.cc). An apply's reply carries "target":
// what the fault acts on as resolved on this node (Fault::ResolvedTarget).
//
// Who may ask what, checked here whoever asks (the controller's own checks
// are not trusted), each refusal PermissionDenied and audited:
//  - the caller's certificate role and revocation (agents/request_gate.h);
//  - apply, revert, workload_start/stop and run_dir_remove need the caller's
//    live lease (subject + drill id: agents/lease.h); a second controller is
//    told who holds the node and until when;
//  - an apply must fit the lease's limits (kinds, targets, faults at once,
//    duration) and this agent's own policy (AgentConfig allow/deny lists,
//    which no controller can widen);
//  - nothing may cut the path to the controller (agents/mgmt_guard.h);
//  - while `fdrill panic` is latched (agents/panic_latch.h) no lease, apply
//    or workload_start is taken, across restarts, until panic_clear.
//
// Safety contract:
//  - apply journals (fsync) the fault's saved state before touching anything;
//  - a failed apply is reverted before the error is returned;
//  - every refusal above comes before anything is touched;
//  - when the lease lapses every fault is reverted and the workload stopped;
//  - a fault applied with max_duration_ms is reverted by the agent itself
//    once that long has passed, whatever the controller does;
//  - SweepAtStart() at start reverts what a previous life left applied,
//    and every hello afterwards says what it reverted and when;
//  - a journal that cannot be written (a full or read-only state
//    directory) never stops a revert: the sweep and every revert go on,
//    applies and leases are refused ("journal cannot be written: …", in
//    hello and /metrics too) until it can be written again (tried each
//    second), with no restart;
//  - a renewal never takes a lapsed lease back, and no lease is granted
//    while a fault of an earlier one is in force;
//  - panic reverts before it writes its latch, and a latch it cannot write
//    holds in memory.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "agents/audit.h"
#include "agents/caller.h"
#include "agents/counters_delta.h"
#include "agents/ib_watch.h"
#include "agents/journal.h"
#include "agents/lease.h"
#include "agents/metrics_tail.h"
#include "agents/mgmt_guard.h"
#include "agents/panic_latch.h"
#include "agents/rank_cpu.h"
#include "agents/ras_watch.h"
#include "agents/request_gate.h"
#include "agents/tcp_link_retrans.h"
#include "agents/workload.h"
#include "common/core/clock.h"
#include "common/host/gpus.h"
#include "common/host/host.h"
#include "common/wire/protocol.h"
#include "common/wire/wire.h"
#include "injectors/injector.h"

namespace fdrill {

struct AgentConfig {
  std::string node;                 // "n1"
  std::string state_dir;            // journal and workload logs live here
  std::string mgmt_interface;       // never faulted
  std::set<std::string> allowlist;  // targets faults may touch; empty = any but guarded ones
  // This node's own policy, which no controller can widen (--allow-kinds,
  // --deny-kinds, --deny): kinds a fault may be (empty: any), kinds and
  // targets it may never be or touch.
  std::set<std::string> allow_kinds;
  std::set<std::string> deny_kinds;
  std::set<std::string> deny_targets;
  // The address --listen serves on ("0.0.0.0": any): the interface holding
  // it is guarded (agents/mgmt_guard.h).
  std::string listen_address;
  // Revoked certificate serials (agents/request_gate.h); "" none.
  std::string revoked_file;
  std::string tmpdir = "/tmp";  // where local ranks write metrics
  // How often a `counters` sample (agents/counters.h) is pushed while a
  // workload runs; fdrill-agent --telemetry-interval, 100 ms .. 1 h.
  Duration telemetry_interval = std::chrono::seconds(1);
};

class AgentService {
 public:
  using Push = std::function<void(Json)>;

  AgentService(AgentConfig config, Host host, const Clock& clock);
  ~AgentService();

  void set_push(Push push) { push_ = std::move(push); }
  // A receiver of pushes joined (a session past its handshake): the next
  // `counters` push is a whole sample, not a delta (agents/counters_delta.h).
  void ReceiverJoined() { counters_delta_.Reset(); }

  // One request in, one reply out (same id) — or null where none goes: a
  // lease renewal asking to be acknowledged by push (proto::key::kAck) that
  // was taken; a refusal is always a reply. `caller` is who asked
  // (agents/caller.h): admission, lease ownership and the audit log go by it.
  Json Handle(const Json& request, const Caller& caller);
  // A caller without TLS at `peer` (an --insecure agent; tests).
  Json Handle(const Json& request, const std::string& peer) {
    return Handle(request, Caller{.peer = peer});
  }
  void Tick();
  // The node's telemetry is sampled once per --telemetry-interval, on one
  // grid, and that one sample feeds both the `counters` push (while a drill
  // holds the lease or a workload's metrics are watched) and /metrics
  // (MetricsEndpoint reads it here). Without an endpoint an idle agent
  // samples nothing; KeepSampling(true) makes it sample when idle too.
  void KeepSampling(bool on) { keep_sampling_ = on; }
  const Json& latest_telemetry() const { return telemetry_; }
  std::optional<Clock::TimePoint> telemetry_sampled_at() const { return telemetry_at_; }
  // Pushes the records written since the last push (`metrics`), now: the
  // server calls it as soon as a file in metrics_dir() changes; Tick does
  // every kTailEvery as well (every second where the server watches). The directory is "" when
  // there is none.
  void PushMetrics();
  const std::string& metrics_dir() const { return tail_.dir(); }
  // Whether the server watches metrics_dir() for writes (inotify): then the
  // tick's own look at the files is a 1 s backstop instead of kTailEvery.
  void SetMetricsWatched(bool watched) { metrics_watched_ = watched; }
  // How soon Tick wants to run again: kBusyTick while a workload runs (its
  // exit is polled), else kIdleTick (the 100 ms metrics tail needs no more).
  // A fault in force does not make the agent busy by itself: it wakes for
  // what is due — a fault's next scheduled change (a flap's edge, a
  // straggler's stop: Fault::NextChange), its max duration, and the lease's
  // lapse, which reverts it — when that comes sooner: then the interval is
  // the time left until it, from now. An idle agent wakes 10 times a second
  // instead of 50, and so does one holding a fault with nothing due
  // (docs/performance.md).
  static constexpr Duration kBusyTick = std::chrono::milliseconds(20);
  static constexpr Duration kIdleTick = std::chrono::milliseconds(100);
  Duration TickInterval() const;

  // Reverts every journalled fault (start-up sweep and --revert-all).
  // Returns how many were reverted; idempotent. With `swept`, each reverted
  // fault is appended to it as {fault_id, kind, target}.
  Result<int> SweepJournal(Json* swept = nullptr);
  // The start-up sweep: SweepJournal, remembered with the wall time it ended
  // so hello can say what a previous life of this agent left applied and
  // when it was reverted (hello's start_sweep; docs/reference/protocol.md).
  Result<int> SweepAtStart();
  // Reverts every live fault and stops the workload (lease lapse, shutdown).
  void RevertEverything(const std::string& why);

  size_t active_faults() const { return faults_.size(); }
  // For the metrics endpoint (agents/metrics_endpoint.h): live faults per
  // kind, whether a controller's lease is held, whether a workload runs.
  std::map<std::string, int> active_fault_kinds() const {
    std::map<std::string, int> kinds;
    for (const auto& [id, active] : faults_) ++kinds[active.kind];
    return kinds;
  }
  bool lease_held() const { return lease_.held(); }
  bool panic_latched() const { return panic_.latched(); }
  bool workload_running() const { return workload_.running(); }
  // Why the journal or the audit log cannot be written now; "" while it can.
  const std::string& journal_error() const { return journal_error_; }
  const std::string& audit_error() const { return audit_.error(); }

 private:
  struct Active {
    std::string kind;
    std::unique_ptr<Fault> fault;
    Clock::TimePoint applied_at;
    Duration max_duration{};  // zero: no limit of its own
  };

  // Runs the handler for `type`, from one table keyed by the protocol's
  // request types; "unknown request type" for any other. May throw
  // Json::exception (Handle catches it).
  Result<Json> Dispatch(const std::string& type, const Json& req, const Caller& caller);
  // Ok when `caller` may send `type` now: lease ownership and the panic
  // latch (the role was checked by gate_).
  Status Permit(const std::string& type, const Json& req, const Caller& caller);
  Result<Json> Hello();
  Result<Json> Check(const Json& req, const Caller& caller);
  Result<Json> Snapshot();
  Result<Json> Apply(const Json& req, const Caller& caller);
  Result<Json> Revert(const Json& req);
  Result<Json> RevertAll();
  // revert_all from a caller: with "latch", panic latches first.
  Result<Json> Panic(const Json& req, const Caller& caller);
  Result<Json> PanicClear(const Caller& caller);
  Result<Json> TakeLease(const Json& req, const Caller& caller);
  Result<Json> WorkloadStart(const Json& req);
  Result<Json> WorkloadStop(const Json& req);
  Result<Json> Inventory();
  // run_dir_remove {dir}: the run directory this agent watches (and only
  // that one, named fdrill-*, with no workload running) is deleted, ranks'
  // files included: a real cluster's /tmp does not fill up drill by drill.
  Result<Json> RunDirRemove(const Json& req);
  // ras_watch {ras_addr, interval_ms, for_ms} | {stop}: agents/agent_ras.cc.
  Result<Json> RasWatchRequest(const Json& req);
  // The RAS watch's changes as `ras` pushes (from Tick).
  void PushRasChanges();
  // ib_watch {for_ms} | {stop}: agents/agent_ib.cc.
  Result<Json> IbWatchRequest(const Json& req);
  // The RDMA async events read as `ib_async` pushes (from Tick).
  void PushIbEvents();
  // host_.gpus once it has loaded; null without NVML (host_.gpus null, as on
  // the fake host: inventory says "not used", samples carry no NVLink
  // counters; or tried once, so a GPU-less node does not dlopen every second).
  Gpus* TelemetryGpus();
  // Samples the counters when the telemetry interval is due (on this node's
  // grid) and pushes them while a drill owns the node or a run is watched.
  void SampleCounters(Clock::TimePoint now);
  // The last 8 KiB of the workload's log, from a character boundary.
  std::string LogTail() const;
  // The lease lapsed: broken, everything reverted, lease_expired pushed.
  void LapseLease();
  // push_(msg) when set; never throws (a failure is logged).
  void SendPush(Json msg);
  // The journal after a fault was reverted: its record cleared, or, when
  // the journal cannot be written, the failure kept (JournalFailed) and the
  // id remembered for RetryJournal.
  void ClearJournalled(const std::string& id);
  void JournalFailed(const Status& s);
  // Ok while the journal can be written; else one more try, then
  // FailedPrecondition "journal cannot be written: …".
  Status JournalWritable();
  // Opens the journal again and clears what could not be cleared; on
  // success journal_error_ is empty again.
  void RetryJournal();
  // SIGKILLs every fdrill-collective rank in this node's namespace; how many.
  int KillRanks();

  // The fault, once every rule above admits it on this node for `caller`.
  Result<std::unique_ptr<Fault>> Prepare(const proto::FaultSpec& spec, const Caller& caller);
  Status RevertOne(const std::string& id, Active& active);

  AgentConfig config_;
  Json HostSnapshot();
  Host host_;
  const Clock& clock_;
  Journal journal_;
  // Why the journal could not be written last ("" while it can): applies
  // and leases are refused until RetryJournal succeeds. unjournalled_: the
  // faults reverted since whose records could not be cleared.
  std::string journal_error_;
  std::set<std::string> unjournalled_;
  Clock::TimePoint journal_retry_at_{};
  AuditLog audit_;
  Push push_;
  std::map<std::string, Active> faults_;
  Workload workload_;
  MetricsTail tail_;
  Clock::TimePoint last_tail_{};
  bool metrics_watched_ = false;
  // When Tick last set the faults' state (TickInterval counts each fault's
  // edges from there, not from now: see there).
  Clock::TimePoint last_tick_{};
  Clock::TimePoint last_counters_{};
  bool keep_sampling_ = false;
  Json telemetry_ = Json::object();  // the latest good sample
  CountersDelta counters_delta_;     // what the `counters` pushes carry
  std::optional<Clock::TimePoint> telemetry_at_;
  bool telemetry_warned_ = false;  // once per failing streak
  Gpus* telemetry_gpus_ = nullptr;
  bool telemetry_gpus_tried_ = false;
  std::unique_ptr<TcpLinkRetrans> tcp_links_;  // from host_.tcp_sockets, on first use
  std::unique_ptr<RankCpu> rank_cpu_;          // from host_.procs; null without one
  RequestGate gate_;
  Lease lease_;
  PanicLatch panic_;
  MgmtGuard guard_;
  bool renewal_ = false;  // the lease request being handled renews the owner's lease
  // The request being handled succeeded and is acknowledged in a push, not
  // a reply (a lease renewal with proto::key::kAck "push"): Handle returns
  // null and the session sends nothing.
  bool ack_by_push_ = false;
  // The last renewal taken to be acknowledged by push: its number, its
  // drill, and by when (proto::key::kAckWithinMs after it came). The next
  // counters push carries it; at `due` a lease_ack push of its own goes
  // (Tick). Pushes go to every session: the drill names whose renewal it
  // was.
  struct LeaseAck {
    uint64_t renewal = 0;
    std::string drill;
    Clock::TimePoint due;
  };
  std::optional<LeaseAck> lease_ack_;
  Json start_sweep_;               // null until SweepAtStart ran
  std::unique_ptr<RasWatch> ras_;  // null: no NCCL RAS service watched
  std::unique_ptr<IbWatch> ib_;    // null: no RDMA device's events listened to
};

}  // namespace fdrill

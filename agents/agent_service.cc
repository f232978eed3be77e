// AgentService (agent_service.h): a request in, its reply out — who may ask
// what (Permit), the dispatch table, hello, check, apply, the lease, panic
// and inventory. Reverts and the journal: agent_service_journal.cc; the
// timer: agent_service_tick.cc.
#include "agents/agent_service.h"

#include <unistd.h>

#include <map>
#include <string_view>

#include "agents/inventory.h"
#include "agents/software.h"
#include "common/core/json.h"
#include "common/core/log.h"
#include "common/core/version.h"
#include "common/wire/protocol.h"
#include "injectors/burn_process.h"
#include "injectors/netdev.h"
#include "injectors/rdma_reach.h"

namespace fdrill {

AgentService::AgentService(AgentConfig config, Host host, const Clock& clock)
    : config_(std::move(config)),
      host_(host),
      clock_(clock),
      journal_(config_.state_dir + "/journal.jsonl"),
      audit_(config_.state_dir + "/audit.jsonl"),
      gate_(config_.revoked_file),
      panic_(config_.state_dir + "/panic.json"),
      guard_(config_.mgmt_interface, config_.listen_address, clock) {
  if (host_.procs != nullptr) rank_cpu_ = std::make_unique<RankCpu>(*host_.procs);
  if (panic_.latched())
    spdlog::warn("panic is latched ({}): faults are refused until `fdrill panic --clear`",
                 DumpJson(panic_.State()));
}

AgentService::~AgentService() = default;

namespace {
// The fault(s) a request names, for the log line: an apply's or revert's
// fault_id, a check's list; "" when none (or not strings).
std::string FaultIdForLog(const Json& req) {
  auto it = req.find(proto::key::kFaultId);
  if (it != req.end()) return it->is_string() ? it->get<std::string>() : "";
  std::string ids;
  auto faults = req.find(proto::key::kFaults);
  if (faults == req.end() || !faults->is_array()) return ids;
  for (const auto& f : *faults) {
    auto id = f.find(proto::key::kFaultId);  // end() for a non-object
    if (id != f.end() && id->is_string()) ids += (ids.empty() ? "" : ",") + id->get<std::string>();
  }
  return ids;
}
// "ttl_ms" of a lease request. A float (5e31) or a string is the request's
// fault; converting it would be undefined behaviour (the agent fuzzer found it).
Result<int64_t> TtlMs(const Json& req, int64_t absent) {
  auto it = req.find(proto::key::kTtlMs);
  if (it == req.end()) return absent;
  if (!it->is_number_integer() || (it->is_number_unsigned() && it->get<uint64_t>() > INT64_MAX))
    return InvalidArgument("lease \"ttl_ms\" must be an integer: 0 (release) or 100..86400000");
  return it->get<int64_t>();
}
}  // namespace

Json AgentService::Handle(const Json& req, const Caller& caller) {
  const uint64_t id = RequestId(req);
  const std::string type = RequestType(req);
  Result<Json> r =
      InvalidArgument("the request has no \"type\" string (docs/reference/protocol.md)");
  // A field of the wrong JSON type ("fault_id": 5) throws from Json::value;
  // it is the request's fault: an invalid_argument reply, audited, and the
  // connection stays. Each handler reads its fields before it touches
  // anything, so a throw never interrupts a change half made.
  if (!type.empty()) {
    try {
      Status admitted = gate_.Admit(caller, type);
      if (admitted.ok()) admitted = Permit(type, req, caller);
      r = admitted.ok() ? Dispatch(type, req, caller) : Result<Json>(admitted);
    } catch (const Json::exception& e) {
      r = InvalidArgument(
          type + ": a request field has the wrong type (docs/reference/protocol.md): " + e.what());
    } catch (const std::exception& e) {
      // Not the request's fault (a filesystem error, memory): said, and the
      // agent goes on serving; what was applied is in the journal.
      r = Internal(type + ": " + e.what());
    }
  }
  // Renewals are not audited (one a second); a lease refused or taken anew is.
  if (type != proto::kLease || !r.ok() || !renewal_) {
    std::string result = r.ok() ? "ok" : r.status().ToString();
    (void)audit_.Record(clock_.WallNanos(), caller.peer, caller.subject, req, result);
    spdlog::info("request {} {} from {} {}: {}", type, FaultIdForLog(req), caller.peer,
                 caller.subject, result);
  }
  if (!r.ok()) return MakeErrorReply(id, r.status().Annotate(config_.node));
  if (ack_by_push_) return Json();  // acknowledged in a push (lease_ack_)
  return MakeReply(id, std::move(*r));
}

Status AgentService::Permit(const std::string& type, const Json& req, const Caller& caller) {
  bool puts_on = type == proto::kApply || type == proto::kWorkloadStart;
  if (type == proto::kLease) {
    auto ttl_ms = TtlMs(req, 1);
    if (!ttl_ms.ok()) return ttl_ms.status();
    puts_on = *ttl_ms != 0;
  }
  if (puts_on && panic_.latched()) return panic_.Refusal(type);
  const std::string drill = req.value(proto::key::kDrill, "");
  // What puts something on the node needs the caller's live lease.
  if (type == proto::kApply || type == proto::kWorkloadStart)
    return lease_.Check(caller.subject, drill, type, clock_.Now(), clock_.WallNanos());
  // What undoes may run on a free node, never under another drill's lease;
  // revert_all with latch is `fdrill panic`, the emergency stop: always.
  const bool undoes = type == proto::kRevert || type == proto::kWorkloadStop ||
                      type == proto::kRunDirRemove ||
                      (type == proto::kRevertAll && !req.value(proto::key::kLatch, false));
  if (undoes)
    return lease_.CheckNotOthers(caller.subject, drill, type, clock_.Now(), clock_.WallNanos());
  return Status::Ok();
}

Result<Json> AgentService::Dispatch(const std::string& type, const Json& req,
                                    const Caller& caller) {
  // One row per request type of the protocol (proto::kRequestTypes).
  using Handler = Result<Json> (*)(AgentService&, const Json&, const Caller&);
  static const std::map<std::string_view, Handler> kHandlers = {
      {proto::kHello, [](AgentService& a, const Json&, const Caller&) { return a.Hello(); }},
      {proto::kCheck,
       [](AgentService& a, const Json& r, const Caller& c) { return a.Check(r, c); }},
      {proto::kSnapshot, [](AgentService& a, const Json&, const Caller&) { return a.Snapshot(); }},
      {proto::kApply,
       [](AgentService& a, const Json& r, const Caller& c) { return a.Apply(r, c); }},
      {proto::kRevert, [](AgentService& a, const Json& r, const Caller&) { return a.Revert(r); }},
      {proto::kRevertAll,
       [](AgentService& a, const Json& r, const Caller& c) { return a.Panic(r, c); }},
      {proto::kPanicClear,
       [](AgentService& a, const Json&, const Caller& c) { return a.PanicClear(c); }},
      {proto::kLease,
       [](AgentService& a, const Json& r, const Caller& c) { return a.TakeLease(r, c); }},
      {proto::kWorkloadStart,
       [](AgentService& a, const Json& r, const Caller&) { return a.WorkloadStart(r); }},
      {proto::kWorkloadStop,
       [](AgentService& a, const Json& r, const Caller&) { return a.WorkloadStop(r); }},
      {proto::kInventory,
       [](AgentService& a, const Json&, const Caller&) { return a.Inventory(); }},
      {proto::kRunDirRemove,
       [](AgentService& a, const Json& r, const Caller&) { return a.RunDirRemove(r); }},
      {proto::kRasWatch,
       [](AgentService& a, const Json& r, const Caller&) { return a.RasWatchRequest(r); }},
      {proto::kIbWatch,
       [](AgentService& a, const Json& r, const Caller&) { return a.IbWatchRequest(r); }},
  };
  renewal_ = false;
  ack_by_push_ = false;
  auto it = kHandlers.find(type);
  if (it == kHandlers.end()) return InvalidArgument("unknown request type \"" + type + "\"");
  return it->second(*this, req, caller);
}

Result<Json> AgentService::Hello() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  Json hello = {{proto::key::kNode, config_.node},
                {proto::key::kHostname, host},
                {proto::key::kVersion, kFdrillVersion},
                {proto::key::kWallNs, clock_.WallNanos()},
                {proto::key::kMgmtInterface, config_.mgmt_interface},
                {proto::key::kActiveFaults, faults_.size()},
                {proto::key::kTmpdir, config_.tmpdir},
                {proto::key::kPanic, panic_.State()}};
  if (!start_sweep_.is_null()) hello[proto::key::kStartSweep] = start_sweep_;
  if (!journal_error_.empty()) hello[proto::key::kJournalError] = journal_error_;
  if (!audit_.error().empty()) hello[proto::key::kAuditError] = audit_.error();
  return hello;
}

Result<std::unique_ptr<Fault>> AgentService::Prepare(const proto::FaultSpec& spec,
                                                     const Caller& caller) {
  const std::string& kind = spec.kind;
  // This node's own policy first: no controller can widen it.
  if (config_.deny_kinds.count(kind) ||
      (!config_.allow_kinds.empty() && !config_.allow_kinds.count(kind))) {
    return PermissionDenied(kind + " refused: this agent's policy does not allow the kind " +
                            "(fdrill-agent --allow-kinds/--deny-kinds)");
  }
  auto fault = MakeFault(kind, spec.params, host_);
  if (!fault.ok()) return fault.status().Annotate(kind);
  std::string target = (*fault)->Target();
  if (Status s = guard_.Admit(kind, spec.params, target, PeerAddress(caller.peer), host_); !s.ok())
    return s;
  if (config_.deny_targets.count(target)) {
    return PermissionDenied(
        kind + " " + target +
        " refused: this agent's policy denies the target (fdrill-agent --deny)");
  }
  if (!config_.allowlist.empty() && !config_.allowlist.count(target)) {
    return PermissionDenied(kind + " " + target +
                            " refused: not in this agent's allowlist (fdrill-agent --allow)");
  }
  if (lease_.held()) {
    if (Status s = lease_.limits().Admit(kind, target, faults_.size()); !s.ok()) return s;
    const int64_t most = lease_.limits().max_duration_ms;
    if (most > 0 && spec.max_duration_ms > most) {
      return PermissionDenied(kind + " " + target + " refused: max_duration_ms " +
                              std::to_string(spec.max_duration_ms) +
                              " is beyond the drill's lease limit of " + std::to_string(most));
    }
  }
  return fault;
}

Result<Json> AgentService::Check(const Json& req, const Caller& caller) {
  const Json faults = req.value(proto::key::kFaults, Json::array());
  if (!faults.is_array()) return InvalidArgument("check: \"faults\" must be an array");
  // Every item read before any is checked: a malformed one is the request's fault.
  std::vector<proto::FaultSpec> specs;
  for (const auto& item : faults) {
    auto spec = proto::FaultSpec::FromJson(item);
    if (!spec.ok()) return spec.status().Annotate("check");
    specs.push_back(std::move(*spec));
  }
  const bool rdma = req.value(proto::key::kTransport, "") == "rdma";
  for (const auto& spec : specs) {
    auto fault = Prepare(spec, caller);
    if (!fault.ok()) return fault.status().Annotate("fault " + spec.fault_id);
    if (auto s = (*fault)->Check(); !s.ok()) return s.Annotate("fault " + spec.fault_id);
    if (const InjectorInfo* info = FindInjector(spec.kind); rdma && info != nullptr) {
      if (Status s = CheckReachesRdma(*info, spec.params, *host_.sysfs); !s.ok())
        return s.Annotate("fault " + spec.fault_id);
    }
  }
  return Json::object();
}

Result<Json> AgentService::Apply(const Json& req, const Caller& caller) {
  // Every field read (and type-checked) before anything is touched.
  auto spec = proto::FaultSpec::FromJson(req);
  if (!spec.ok()) return spec.status().Annotate("apply");
  const std::string& id = spec->fault_id;
  if (auto it = faults_.find(id); it != faults_.end()) {
    return Json{{proto::key::kVerified, true},
                {proto::key::kAlreadyApplied, true},
                {proto::key::kTarget, it->second.fault->ResolvedTarget()}};
  }
  auto fault = Prepare(*spec, caller);
  if (!fault.ok()) return fault.status();
  if (Status s = JournalWritable(); !s.ok()) return s.Annotate("apply " + id);
  Fault& f = **fault;
  // A fault with no limit of its own gets the lease's: it never outstays
  // what the drill declared, whatever the controller does.
  int64_t max_duration_ms = spec->max_duration_ms;
  if (max_duration_ms == 0 && lease_.held()) max_duration_ms = lease_.limits().max_duration_ms;
  if (auto s = f.Capture(); !s.ok()) return s;
  Json record = {{"kind", spec->kind},  // the journal's record (journal.h)
                 {"params", spec->params},
                 {"saved", f.Saved()}};
  if (auto s = journal_.Record(id, record); !s.ok()) {
    JournalFailed(s);
    return s.Annotate("journal");
  }
  // Time zero of the fault's schedule (a flap's edges, its max duration):
  // the moment its change is made, not after the read-back.
  const auto applied_at = clock_.Now();
  if (auto s = f.Apply(); !s.ok()) {
    Status undo = f.Revert();
    if (undo.ok()) ClearJournalled(id);
    return undo.ok() ? s
                     : s.Annotate("apply failed and revert failed too (" + undo.message() + ")");
  }
  Status verified = f.Verify();
  // What it acts on as resolved here ("rank 2 (pid 1234)"): the controller
  // reports this, not its own guess from the params.
  std::string target = f.ResolvedTarget();
  faults_[id] =
      Active{spec->kind, std::move(*fault), applied_at, std::chrono::milliseconds(max_duration_ms)};
  return Json{{proto::key::kVerified, verified.ok()},
              {proto::key::kVerify, verified.ok() ? "ok" : verified.message()},
              {proto::key::kWallNs, clock_.WallNanos()},
              {proto::key::kTarget, target}};
}

Result<Json> AgentService::TakeLease(const Json& req, const Caller& caller) {
  auto ttl = TtlMs(req, 5000);
  if (!ttl.ok()) return ttl.status();
  const int64_t ttl_ms = *ttl;
  const std::string drill = req.value(proto::key::kDrill, "");
  if (ttl_ms == 0) {  // the controller is done and releases the lease
    if (Status s = lease_.Release(caller.subject, drill); !s.ok()) return s;
    lease_ack_.reset();
    return Json{{proto::key::kWallNs, clock_.WallNanos()}};
  }
  if (ttl_ms < 100 || ttl_ms > 86400000)
    return InvalidArgument("lease ttl_ms must be 0 (release) or 100..86400000 (24 h)");
  // Acknowledged by push: read before anything is taken, so a malformed
  // request changes nothing.
  std::optional<LeaseAck> ack;
  if (req.contains(proto::key::kAck)) {
    if (req[proto::key::kAck] != proto::key::kAckPush || !req.contains(proto::key::kRenewal) ||
        !req[proto::key::kRenewal].is_number_unsigned() ||
        !req.value(proto::key::kAckWithinMs, Json()).is_number_unsigned()) {
      return InvalidArgument(
          "lease: ack must be \"push\" with a renewal number and ack_within_ms "
          "(docs/reference/protocol.md)");
    }
    const uint64_t within = req[proto::key::kAckWithinMs].get<uint64_t>();
    if (within < 1 || within > static_cast<uint64_t>(ttl_ms))
      return InvalidArgument("lease: ack_within_ms must be 1..ttl_ms");
    ack = LeaseAck{.renewal = req[proto::key::kRenewal].get<uint64_t>(),
                   .drill = drill,
                   .due = clock_.Now() + std::chrono::milliseconds(within)};
  }
  auto limits = LeaseLimits::FromJson(req.value(proto::key::kLimits, Json()));
  if (!limits.ok()) return limits.status();
  const auto now = clock_.Now();
  const bool lapsed = lease_.Lapsed(now);  // held, and past its deadline
  const bool live = lease_.held() && !lapsed;
  renewal_ = live && lease_.owner() == caller.subject && lease_.drill() == drill;
  // A lapse Tick has not seen yet is handled first, as Tick would.
  if (lapsed) LapseLease();
  // A renewal renews a live lease, never takes one: one sent before a
  // management cut and delivered after the lapse would otherwise take the
  // node back before the controller has heard of the lapse. A new acquire
  // (no "renewal") takes it again.
  if (ack && !live) {
    return FailedPrecondition(
        "lease renewal " + std::to_string(ack->renewal) + " for drill " + drill +
        " refused: this node's lease " + (lapsed ? "lapsed" : "is not held") +
        "; a renewal never takes a lease, a new acquire (no \"renewal\") does");
  }
  if (!live) {
    // Nothing of an earlier lease may still be in force when a new one is
    // granted (its lapse reverted it, unless the agent's timer was dead).
    if (!faults_.empty())
      RevertEverything("a new lease is taken while earlier faults are in force");
    if (!faults_.empty()) {
      return FailedPrecondition(std::to_string(faults_.size()) +
                                " fault(s) of an earlier lease could not be reverted; the lease "
                                "is refused until they are (`fdrill panic`, or the agent's log)");
    }
  }
  // The journal ready before the drill's first fault (Journal::Prepare);
  // one that cannot be kept refuses the lease, so no fault can follow.
  if (Status s = journal_.Prepare(); !s.ok()) {
    JournalFailed(s);
    return s.Annotate("lease refused: this agent cannot keep its fault journal");
  }
  if (Status s = JournalWritable(); !s.ok()) return s.Annotate("lease refused");
  if (Status s = lease_.Take(caller.subject, drill, std::chrono::milliseconds(ttl_ms), *limits, now,
                             clock_.WallNanos());
      !s.ok())
    return s;
  // Another drill (or this one after a lapse): its controller starts from
  // a whole counters sample.
  if (!renewal_) counters_delta_.Reset();
  if (ack) {
    // A renewal not yet acknowledged is covered by this later one's number,
    // and still owed by its own time.
    if (lease_ack_) ack->due = std::min(ack->due, lease_ack_->due);
    lease_ack_ = *ack;
    ack_by_push_ = true;
  }
  return Json{{proto::key::kWallNs, clock_.WallNanos()}};
}

Result<Json> AgentService::Panic(const Json& req, const Caller& caller) {
  if (!req.value(proto::key::kLatch, false)) return RevertAll();
  // Latched in memory before anything else, so nothing is applied after
  // this point; then everything reverted; then the latch written. A state
  // directory that cannot be written never stands between the emergency
  // stop and the revert: the latch holds in memory, and the reply says so.
  panic_.Latch(caller.subject, req.value(proto::key::kReason, ""), clock_.WallNanos());
  lease_.Break();
  lease_ack_.reset();
  spdlog::warn("panic latched by {} {}", caller.peer, caller.subject);
  if (workload_.running()) workload_.Stop(std::chrono::seconds(3));
  tail_.Stop();
  Result<Json> reverted = RevertAll();
  Status saved = panic_.Save();
  if (!saved.ok()) {
    spdlog::error("{}; the latch holds in memory until this agent restarts", saved.message());
  }
  if (!reverted.ok()) return reverted;
  if (!saved.ok()) (*reverted)[proto::key::kLatchError] = saved.message();
  return reverted;
}

Result<Json> AgentService::PanicClear(const Caller& caller) {
  const bool was = panic_.latched();
  if (Status s = panic_.Clear(); !s.ok()) return s;
  if (was) spdlog::warn("panic cleared by {} {}", caller.peer, caller.subject);
  return Json{{proto::key::kPanic, nullptr}, {"was_latched", was}};
}

void AgentService::RevertEverything(const std::string& why) {
  if (!faults_.empty() || workload_.running()) spdlog::warn("reverting everything: {}", why);
  if (workload_.running()) workload_.Stop(std::chrono::seconds(3));
  tail_.Stop();
  auto r = RevertAll();
  if (!r.ok()) spdlog::error("revert everything: {}", r.status().ToString());
  ras_.reset();  // never waits (agents/ras_watch.h); after the reverts all the same
  ib_.reset();   // never waits either (agents/ib_watch.h)
}

Result<Json> AgentService::Inventory() {
  if (host_.sysfs == nullptr)
    return FailedPrecondition("inventory: this agent has no sysfs access");
  auto inv = DiscoverInventory(*host_.sysfs, host_.gpus);
  if (!inv.ok()) return inv.status();
  (*inv)[proto::key::kNode] = config_.node;
  Json software = DiscoverSoftware(*host_.sysfs);
  software["fdrill"] = kFdrillVersion;
  (*inv)["software"] = std::move(software);
  return inv;
}

}  // namespace fdrill

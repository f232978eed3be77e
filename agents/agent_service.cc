#include "agents/agent_service.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/counters.h"
#include "agents/inventory.h"
#include "agents/software.h"
#include "harness/core/log.h"
#include "harness/core/version.h"
#include "harness/wire/protocol.h"
#include "injectors/burn_process.h"
#include "injectors/netdev.h"
#include "injectors/ranks.h"
#include "injectors/rdma_reach.h"

namespace fdrill {

namespace {
// Every busy tick, and whenever a metrics file changes (AgentServer's
// MetricsWatch): the controller's live view (gates, stop conditions, the
// impact_seen detection) lags the ranks by a round trip, or by at most
// this where inotify is unavailable.
constexpr auto kTailEvery = std::chrono::milliseconds(20);
}  // namespace

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
                 panic_.State().dump());
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
  Result<Json> r = InvalidArgument("the request has no \"type\" string (docs/protocol.md)");
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
      r = InvalidArgument(type +
                          ": a request field has the wrong type (docs/protocol.md): " + e.what());
    }
  }
  // Renewals are not audited (one a second); a lease refused or taken anew is.
  if (type != proto::kLease || !r.ok() || !renewal_) {
    std::string result = r.ok() ? "ok" : r.status().ToString();
    audit_.Record(clock_.WallNanos(), caller.peer, caller.subject, req, result);
    spdlog::info("request {} {} from {} {}: {}", type, FaultIdForLog(req), caller.peer,
                 caller.subject, result);
  }
  if (!r.ok()) return MakeErrorReply(id, r.status().Annotate(config_.node));
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
  Result<Json> r = InvalidArgument("unknown request type \"" + type + "\"");
  renewal_ = false;
  if (type == proto::kHello)
    r = Hello();
  else if (type == proto::kCheck)
    r = Check(req, caller);
  else if (type == proto::kSnapshot)
    r = Snapshot();
  else if (type == proto::kApply)
    r = Apply(req, caller);
  else if (type == proto::kRevert)
    r = Revert(req);
  else if (type == proto::kRevertAll)
    r = Panic(req, caller);
  else if (type == proto::kPanicClear)
    r = PanicClear(caller);
  else if (type == proto::kLease)
    r = TakeLease(req, caller);
  else if (type == proto::kWorkloadStart)
    r = WorkloadStart(req);
  else if (type == proto::kWorkloadStop)
    r = WorkloadStop(req);
  else if (type == proto::kInventory)
    r = Inventory();
  else if (type == proto::kRunDirRemove)
    r = RunDirRemove(req);
  else if (type == proto::kRasWatch)
    r = RasWatchRequest(req);
  else if (type == proto::kIbWatch)
    r = IbWatchRequest(req);
  return r;
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
  Fault& f = **fault;
  // A fault with no limit of its own gets the lease's: it never outstays
  // what the drill declared, whatever the controller does.
  int64_t max_duration_ms = spec->max_duration_ms;
  if (max_duration_ms == 0 && lease_.held()) max_duration_ms = lease_.limits().max_duration_ms;
  if (auto s = f.Capture(); !s.ok()) return s;
  Json record = {{"kind", spec->kind},  // the journal's record (journal.h)
                 {"params", spec->params},
                 {"saved", f.Saved()}};
  if (auto s = journal_.Record(id, record); !s.ok()) return s.Annotate("journal");
  // Time zero of the fault's schedule (a flap's edges, its max duration):
  // the moment its change is made, not after the read-back.
  const auto applied_at = clock_.Now();
  if (auto s = f.Apply(); !s.ok()) {
    Status undo = f.Revert();
    if (undo.ok()) (void)journal_.Clear(id);
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

Status AgentService::RevertOne(const std::string& id, Active& active) {
  if (auto s = active.fault->Revert(); !s.ok()) return s;
  if (auto s = active.fault->VerifyReverted(); !s.ok()) return s;
  return journal_.Clear(id);
}

Result<Json> AgentService::Revert(const Json& req) {
  std::string id = req.value(proto::key::kFaultId, "");
  auto it = faults_.find(id);
  if (it == faults_.end())
    return Json{{proto::key::kVerified, true}, {proto::key::kWasApplied, false}};
  if (auto s = RevertOne(id, it->second); !s.ok()) return s.Annotate("revert " + id);
  faults_.erase(it);
  return Json{{proto::key::kVerified, true},
              {proto::key::kWasApplied, true},
              {proto::key::kWallNs, clock_.WallNanos()}};
}

Result<Json> AgentService::RevertAll() {
  std::vector<std::string> failed;
  for (auto it = faults_.begin(); it != faults_.end();) {
    Status s = RevertOne(it->first, it->second);
    if (s.ok()) {
      it = faults_.erase(it);
    } else {
      failed.push_back(it->first + ": " + s.message());
      ++it;
    }
  }
  auto swept = SweepJournal();
  if (!failed.empty()) {
    std::string all;
    for (const auto& f : failed) all += (all.empty() ? "" : "; ") + f;
    return FailedPrecondition("could not revert: " + all);
  }
  if (!swept.ok()) return swept.status();
  return Json{{proto::key::kReverted, true}};
}

Result<int> AgentService::SweepAtStart() {
  Json swept = Json::array();
  auto reverted = SweepJournal(&swept);
  if (!reverted.ok()) return reverted;
  start_sweep_ = {{proto::key::kWallNs, clock_.WallNanos()}, {proto::key::kFaults, swept}};
  return reverted;
}

Result<int> AgentService::SweepJournal(Json* swept) {
  auto pending = journal_.Pending();
  if (!pending.ok()) return pending.status();
  int reverted = 0;
  for (const auto& [id, record] : *pending) {
    if (faults_.count(id)) continue;  // live: reverted through faults_
    auto fault = RestoreFault(record, host_);
    if (!fault.ok()) return fault.status().Annotate("journal entry " + id);
    if (auto s = (*fault)->Revert(); !s.ok()) return s.Annotate("journal entry " + id);
    if (auto s = (*fault)->VerifyReverted(); !s.ok()) return s.Annotate("journal entry " + id);
    if (auto s = journal_.Clear(id); !s.ok()) return s;
    spdlog::warn("reverted {} {} left by a previous agent or drill", record.value("kind", "?"), id);
    if (swept != nullptr) {
      swept->push_back({{proto::key::kFaultId, id},
                        {proto::key::kKind, record.value("kind", "")},
                        {proto::key::kTarget, (*fault)->Target()}});
    }
    ++reverted;
  }
  return reverted;
}

Result<Json> AgentService::TakeLease(const Json& req, const Caller& caller) {
  auto ttl = TtlMs(req, 5000);
  if (!ttl.ok()) return ttl.status();
  const int64_t ttl_ms = *ttl;
  const std::string drill = req.value(proto::key::kDrill, "");
  if (ttl_ms == 0) {  // the controller is done and releases the lease
    if (Status s = lease_.Release(caller.subject, drill); !s.ok()) return s;
    return Json{{proto::key::kWallNs, clock_.WallNanos()}};
  }
  if (ttl_ms < 100 || ttl_ms > 86400000)
    return InvalidArgument("lease ttl_ms must be 0 (release) or 100..86400000 (24 h)");
  auto limits = LeaseLimits::FromJson(req.value(proto::key::kLimits, Json()));
  if (!limits.ok()) return limits.status();
  renewal_ = lease_.held() && !lease_.Lapsed(clock_.Now()) && lease_.owner() == caller.subject &&
             lease_.drill() == drill;
  if (Status s = lease_.Take(caller.subject, drill, std::chrono::milliseconds(ttl_ms), *limits,
                             clock_.Now(), clock_.WallNanos());
      !s.ok())
    return s;
  // Another drill (or this one after a lapse): its controller starts from
  // a whole counters sample.
  if (!renewal_) counters_delta_.Reset();
  return Json{{proto::key::kWallNs, clock_.WallNanos()}};
}

Result<Json> AgentService::Panic(const Json& req, const Caller& caller) {
  if (req.value(proto::key::kLatch, false)) {
    // Latched before anything else, so nothing is applied after this point.
    if (Status s =
            panic_.Latch(caller.subject, req.value(proto::key::kReason, ""), clock_.WallNanos());
        !s.ok())
      return s;
    lease_.Break();
    spdlog::warn("panic latched by {} {}", caller.peer, caller.subject);
    if (workload_.running()) workload_.Stop(std::chrono::seconds(3));
    tail_.Stop();
  }
  return RevertAll();
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

Result<Json> AgentService::WorkloadStart(const Json& req) {
  std::vector<std::string> argv = req.value(proto::key::kArgv, std::vector<std::string>{});
  std::map<std::string, std::string> env =
      req.value(proto::key::kEnv, std::map<std::string, std::string>{});
  std::error_code ec_ignored;
  std::string metrics_dir = req.value(proto::key::kMetricsDir, "");
  if (!metrics_dir.empty()) {
    std::error_code ec;
    const bool created = std::filesystem::create_directories(metrics_dir, ec);
    if (ec) return FailedPrecondition("cannot create " + metrics_dir + ": " + ec.message());
    // On a real cluster the ranks run as the operator and write here; the
    // agent (root) made the run's directory, so it opens it as /tmp is:
    // anyone may create files, only their owner may remove them.
    if (created) {
      std::filesystem::permissions(
          metrics_dir, std::filesystem::perms::all | std::filesystem::perms::sticky_bit, ec);
    }
    tail_.Watch(metrics_dir);
    if (rank_cpu_ != nullptr) rank_cpu_->ExpectRanks();  // a run's ranks start now
  }
  if (argv.empty())
    return Json{{proto::key::kStarted, false}, {proto::key::kWatching, metrics_dir}};
  std::string log = config_.state_dir + "/workload.log";
  std::filesystem::remove(log, ec_ignored);
  if (auto s = workload_.Start(argv, env, log); !s.ok()) return s;
  if (rank_cpu_ != nullptr) rank_cpu_->ExpectRanks();
  return Json{
      {proto::key::kStarted, true}, {proto::key::kPid, workload_.pid()}, {proto::key::kLog, log}};
}

// With a stop_file, asks the workload to stop by itself (fdrill-collective
// --stop-file: every rank ends after the same iteration) and returns at once;
// the exit arrives as a workload_exit push. Without one, ends the process
// group now.
int AgentService::KillRanks() {
  if (host_.procs == nullptr) return 0;
  auto ranks = FindRanks(*host_.procs, std::nullopt);
  if (!ranks.ok()) return 0;  // none left
  int killed = 0;
  for (const RankProc& r : *ranks) {
    if (SignalIfSame(*host_.procs, r.pid, r.start_ticks, SIGKILL).ok()) ++killed;
  }
  spdlog::warn("killed {} workload rank(s) left by a stopped job", killed);
  return killed;
}

Result<Json> AgentService::WorkloadStop(const Json& req) {
  std::string stop_file = req.value(proto::key::kStopFile, "");
  if (!stop_file.empty()) {
    std::ofstream touch(stop_file);
    if (!touch) return FailedPrecondition("cannot create stop file " + stop_file);
    return Json{{proto::key::kRequested, true}, {proto::key::kRunning, workload_.running()}};
  }
  // kill: a hung job (issue #8's restart policy): no grace for the launcher,
  // and every fdrill-collective rank in this node's namespace is killed too —
  // a stopped (SIGSTOP) rank ignores the launcher's SIGTERM.
  const bool kill = req.value(proto::key::kKill, false);
  auto code = workload_.Stop(kill ? Duration{} : Duration(std::chrono::seconds(5)));
  Json out = {{proto::key::kExitCode, code ? Json(*code) : Json(nullptr)},
              {proto::key::kLogTail, LogTail()}};
  if (kill) out[proto::key::kRanksKilled] = KillRanks();
  return out;
}

Result<Json> AgentService::RunDirRemove(const Json& req) {
  const std::string dir = req.value(proto::key::kDir, "");
  if (dir.empty() || dir != tail_.dir()) {
    return FailedPrecondition("run_dir_remove " + dir +
                              ": not the run directory this agent watches (" +
                              (tail_.dir().empty() ? std::string("none") : tail_.dir()) + ")");
  }
  if (std::filesystem::path(dir).filename().string().rfind("fdrill-", 0) != 0) {
    return FailedPrecondition("run_dir_remove " + dir + ": not a run directory (fdrill-*)");
  }
  if (workload_.running())
    return FailedPrecondition("run_dir_remove " + dir + ": the workload still runs");
  tail_.Stop();
  std::error_code ec;
  const auto removed = std::filesystem::remove_all(dir, ec);
  if (ec) return FailedPrecondition("run_dir_remove " + dir + ": " + ec.message());
  return Json{{proto::key::kRemoved, removed}};
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

std::string AgentService::LogTail() const {
  std::ifstream in(config_.state_dir + "/workload.log", std::ios::binary | std::ios::ate);
  if (!in) return "";
  auto size = static_cast<int64_t>(in.tellg());
  int64_t from = std::max<int64_t>(0, size - 8192);
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  return tail;
}

Duration AgentService::TickInterval() const {
  Duration interval = workload_.running() ? kBusyTick : kIdleTick;
  if (faults_.empty()) return interval;
  const auto now = clock_.Now();
  // Lapsed is "past the deadline": wake just after it.
  if (lease_.held() && lease_.deadline() >= now)
    interval = std::min(interval, lease_.deadline() - now + std::chrono::milliseconds(1));
  for (const auto& [id, active] : faults_) {
    const Duration on = now - active.applied_at;
    auto due = active.fault->NextChange(on);
    if (active.max_duration.count() > 0 && (!due || active.max_duration < *due))
      due = active.max_duration;
    // Only what is still ahead: an overdue change (a revert at max duration
    // that failed and is retried) keeps the cadence instead of spinning.
    if (due && *due > on) interval = std::min(interval, *due - on);
  }
  return interval;
}

void AgentService::Tick() {
  auto now = clock_.Now();
  for (auto it = faults_.begin(); it != faults_.end();) {
    auto& [id, active] = *it;
    Duration on = now - active.applied_at;
    if (active.max_duration.count() > 0 && on >= active.max_duration) {
      Status s = RevertOne(id, active);
      spdlog::warn("fault {} reached its max duration {}: reverted ({})", id,
                   FormatDuration(active.max_duration), s.ToString());
      if (push_)
        push_(MakePush(proto::kFaultExpired, {{proto::key::kNode, config_.node},
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
  if (lease_.Lapsed(now)) {
    lease_.Break();
    RevertEverything("the controller's lease lapsed");
    if (push_) push_(MakePush(proto::kLeaseExpired, {{proto::key::kNode, config_.node}}));
  }
  PushRasChanges();
  PushIbEvents();
  if (auto code = workload_.Poll()) {
    auto last = tail_.Poll(SIZE_MAX);  // the ranks' last lines before the exit
    if (!last.empty() && push_)
      push_(MakePush(proto::kMetrics,
                     {{proto::key::kNode, config_.node}, {proto::key::kRecords, last}}));
    if (push_) {
      push_(MakePush(proto::kWorkloadExit, {{proto::key::kNode, config_.node},
                                            {proto::key::kExitCode, *code},
                                            {proto::key::kLogTail, LogTail()}}));
    }
  }
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
      telemetry_ = *counters;
      telemetry_at_ = now;
      telemetry_warned_ = false;
      if (push_counters && push_) {
        CountersDelta::Push p = counters_delta_.Next(*counters);
        Json body = {{proto::key::kNode, config_.node},
                     {proto::key::kCounters, std::move(p.counters)}};
        if (p.delta) body[proto::key::kDelta] = true;
        push_(MakePush(proto::kCounters, std::move(body)));
      }
    } else if (!telemetry_warned_) {
      spdlog::warn("counters: {}", counters.status().message());
      telemetry_warned_ = true;  // once per failing streak, not once a second
    }
  }
  if (tail_.watching() && now - last_tail_ >= kTailEvery) PushMetrics();
}

void AgentService::PushMetrics() {
  if (!tail_.watching()) return;
  last_tail_ = clock_.Now();
  auto records = tail_.Poll();
  if (!records.empty() && push_)
    push_(MakePush(proto::kMetrics,
                   {{proto::key::kNode, config_.node}, {proto::key::kRecords, records}}));
}

}  // namespace fdrill

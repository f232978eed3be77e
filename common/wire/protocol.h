// The control protocol's vocabulary (docs/reference/protocol.md), named once for both
// ends: the agent (agents/agent_service.cc) and the controller
// (harness/controller/) build and read message bodies only through these
// names, so a field renamed on one side is renamed on the other, or the
// build fails. tests/wire/protocol_test.cc holds the table to the document
// (every request and push type has its section there, and no section names a
// type that is not here) and the agent to the table (it answers every
// request type).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/core/json.h"
#include "common/core/result.h"

namespace fdrill::proto {

// Request types: the controller sends, the agent answers with a reply.
inline constexpr char kHello[] = "hello";
inline constexpr char kCheck[] = "check";
inline constexpr char kSnapshot[] = "snapshot";
inline constexpr char kApply[] = "apply";
inline constexpr char kRevert[] = "revert";
inline constexpr char kRevertAll[] = "revert_all";
inline constexpr char kLease[] = "lease";
inline constexpr char kWorkloadStart[] = "workload_start";
inline constexpr char kWorkloadStop[] = "workload_stop";
inline constexpr char kInventory[] = "inventory";
inline constexpr char kRunDirRemove[] = "run_dir_remove";
inline constexpr char kPanicClear[] = "panic_clear";
inline constexpr char kRasWatch[] = "ras_watch";
inline constexpr char kIbWatch[] = "ib_watch";
inline constexpr std::array<std::string_view, 14> kRequestTypes = {
    kHello,         kCheck,        kSnapshot,  kApply,        kRevert,     kRevertAll, kLease,
    kWorkloadStart, kWorkloadStop, kInventory, kRunDirRemove, kPanicClear, kRasWatch,  kIbWatch};

// Push types: the agent sends unasked (envelope id 0).
inline constexpr char kMetrics[] = "metrics";
inline constexpr char kCounters[] = "counters";
inline constexpr char kWorkloadExit[] = "workload_exit";
inline constexpr char kFaultExpired[] = "fault_expired";
inline constexpr char kLeaseExpired[] = "lease_expired";
inline constexpr char kRas[] = "ras";
inline constexpr char kIbAsync[] = "ib_async";
// A lease renewal acknowledged on its own: no counters push went in time.
inline constexpr char kLeaseAck[] = "lease_ack";
inline constexpr std::array<std::string_view, 8> kPushTypes = {
    kMetrics, kCounters, kWorkloadExit, kFaultExpired, kLeaseExpired, kRas, kIbAsync, kLeaseAck};

// Body keys. One key means one thing in every message that carries it.
namespace key {
inline constexpr char kNode[] = "node";          // the agent's node name (replies, pushes)
inline constexpr char kWallNs[] = "wall_ns";     // the agent's wall clock, ns since epoch
inline constexpr char kHostname[] = "hostname";  // hello
inline constexpr char kVersion[] = "version";    // hello
inline constexpr char kMgmtInterface[] = "mgmt_interface";  // hello
inline constexpr char kActiveFaults[] = "active_faults";    // hello
inline constexpr char kTmpdir[] = "tmpdir";                 // hello
// hello: what this agent's start-up journal sweep reverted, and when
// ({wall_ns, faults: [{fault_id, kind, target}]}); absent when none ran.
inline constexpr char kStartSweep[] = "start_sweep";
// hello: why the fault journal or the audit log cannot be written now (a
// full or read-only state directory); absent while they can. While
// journal_error is present every apply and lease is refused.
inline constexpr char kJournalError[] = "journal_error";
inline constexpr char kAuditError[] = "audit_error";
inline constexpr char kFaults[] = "faults";  // check: [FaultSpec]
// check: "rdma" when the drill's workload moves its data over RDMA verbs
// (the agent refuses a fault that cannot reach them); absent or "tcp".
inline constexpr char kTransport[] = "transport";
// ras_watch: the job's NCCL_RAS_ADDR ("host:port" on this node; default
// localhost:28028), how often to ask (interval_ms) and for how long
// (for_ms); stop: end the watch. ras push: answered (bool), ras_status
// (RasStatusJson) or ras_error, wall_ns.
inline constexpr char kRasAddr[] = "ras_addr";
inline constexpr char kIntervalMs[] = "interval_ms";
inline constexpr char kForMs[] = "for_ms";
inline constexpr char kStop[] = "stop";
inline constexpr char kAnswered[] = "answered";
inline constexpr char kRasStatus[] = "ras_status";
inline constexpr char kRasError[] = "ras_error";
// ib_watch: for how long (for_ms); stop: end the watch. Reply: watching,
// devices [{name, ports: [{port, state, phys_state, lid, link_layer}]}].
// ib_async push: device, port (0: the whole device), event ("PORT_ERR"...),
// wall_ns (common/host/verbs.h).
inline constexpr char kDevices[] = "devices";
inline constexpr char kPorts[] = "ports";
inline constexpr char kPort[] = "port";
inline constexpr char kState[] = "state";
inline constexpr char kPhysState[] = "phys_state";
inline constexpr char kLid[] = "lid";
inline constexpr char kLinkLayer[] = "link_layer";
inline constexpr char kDevice[] = "device";
inline constexpr char kEvent[] = "event";
inline constexpr char kFaultId[] = "fault_id";  // FaultSpec, revert, fault_expired
inline constexpr char kKind[] = "kind";
inline constexpr char kParams[] = "params";
inline constexpr char kMaxDurationMs[] = "max_duration_ms";
inline constexpr char kVerified[] = "verified";  // apply, revert replies
inline constexpr char kVerify[] = "verify";      // apply reply: "ok" or why not
inline constexpr char kAlreadyApplied[] = "already_applied";
inline constexpr char kTarget[] = "target";  // apply reply: the target as resolved on the node
inline constexpr char kWasApplied[] = "was_applied";
inline constexpr char kReverted[] = "reverted";  // revert_all reply, fault_expired
inline constexpr char kLinks[] = "links";  // snapshot: [{name, admin_up, qdisc, qdisc_handle}]
inline constexpr char kName[] = "name";
inline constexpr char kAdminUp[] = "admin_up";
inline constexpr char kQdisc[] = "qdisc";
inline constexpr char kQdiscHandle[] = "qdisc_handle";
inline constexpr char kQdiscTree[] = "qdisc_tree";
inline constexpr char kHost[] = "host";  // snapshot: what faults beyond links could leave
inline constexpr char kStoppedRanks[] = "stopped_ranks";
inline constexpr char kBurners[] = "burners";
inline constexpr char kBurnCgroups[] = "burn_cgroups";
inline constexpr char kFdrillRules[] = "fdrill_rules";
inline constexpr char kTtlMs[] = "ttl_ms";  // lease: 0 releases
// The drill a request belongs to: the lease's owner is the certificate's
// subject plus this; apply, revert, workload_* and run_dir_remove carry it
// and must match the live lease ("" when the controller gave none).
inline constexpr char kDrill[] = "drill";
inline constexpr char kLimits[] = "limits";  // lease: the drill's limits on this node
// lease (a renewal): "push" asks the agent to acknowledge a renewal it took
// in a push instead of a reply — `lease_ack` = the request's `renewal`
// number, in its next counters push or, when none goes within
// `ack_within_ms`, a lease_ack push of its own. A refusal is still a reply.
// One reply message fewer per agent per renewal (docs/reference/protocol.md §2).
inline constexpr char kAck[] = "ack";
inline constexpr char kAckPush[] = "push";
inline constexpr char kRenewal[] = "renewal";
inline constexpr char kAckWithinMs[] = "ack_within_ms";
inline constexpr char kLeaseAck[] = "lease_ack";  // counters and lease_ack pushes
inline constexpr char kLatch[] = "latch";         // revert_all: latch the panic (fdrill panic)
inline constexpr char kReason[] = "reason";       // revert_all with latch
inline constexpr char kPanic[] = "panic";         // hello: the latch ({by, reason, at_ns}) or null
// revert_all with latch: why the latch could not be written to the state
// directory (it holds in memory until the agent restarts); absent when it was.
inline constexpr char kLatchError[] = "latch_error";
inline constexpr char kArgv[] = "argv";  // workload_start
inline constexpr char kEnv[] = "env";
inline constexpr char kMetricsDir[] = "metrics_dir";
inline constexpr char kStarted[] = "started";
inline constexpr char kWatching[] = "watching";
inline constexpr char kPid[] = "pid";
inline constexpr char kLog[] = "log";
inline constexpr char kStopFile[] = "stop_file";  // workload_stop
inline constexpr char kKill[] = "kill";
inline constexpr char kRequested[] = "requested";
inline constexpr char kRunning[] = "running";
inline constexpr char kExitCode[] = "exit_code";  // workload_stop reply, workload_exit
inline constexpr char kLogTail[] = "log_tail";
inline constexpr char kRanksKilled[] = "ranks_killed";
inline constexpr char kDir[] = "dir";  // run_dir_remove
inline constexpr char kRemoved[] = "removed";
inline constexpr char kRecords[] = "records";    // metrics push
inline constexpr char kCounters[] = "counters";  // counters push
// counters push: true when `counters` holds only what changed since the
// node's previous push (agents/counters_delta.h); absent: a whole sample.
inline constexpr char kDelta[] = "delta";
}  // namespace key

// One fault as `check` lists it and `apply` puts it in force.
struct FaultSpec {
  std::string fault_id;
  std::string kind;
  Json params = Json::object();
  int64_t max_duration_ms = 0;  // apply: the agent's own limit; 0 = none. Not sent in check.

  Json ToJson() const;
  // Reads and type-checks every field before anything acts on it: a missing
  // fault_id or kind, a field of the wrong JSON type or a negative
  // max_duration_ms is InvalidArgument naming the field.
  static Result<FaultSpec> FromJson(const Json& j);
};

}  // namespace fdrill::proto

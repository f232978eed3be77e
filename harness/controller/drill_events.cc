#include "harness/controller/drill_events.h"

#include "common/wire/protocol.h"
#include "reports/digest.h"

namespace fdrill {

std::string DrillEvents::dir() const {
  RunRecorder* rec = rec_.load();
  return rec != nullptr ? rec->dir() : std::string();
}

void DrillEvents::Event(const std::string& type, Json fields) {
  if (RunRecorder* rec = rec_.load()) rec->Event(type, std::move(fields));
}

void DrillEvents::DrillStart(const std::string& name) { Event("drill_start", {{"name", name}}); }

void DrillEvents::AgentConnected(const std::string& node, const std::string& address,
                                 int64_t offset_ns) {
  Event("agent_connected", {{"node", node},
                            {"address", address},
                            {"clock_offset_ms", static_cast<double>(offset_ns) / 1e6}});
}

void DrillEvents::Snapshot(const std::string& node, const Json& state) {
  Event("snapshot", {{"node", node}, {"state", state}});
}

void DrillEvents::Abort(const std::string& reason, const std::string& cause) {
  Event("abort", {{"reason", reason}, {"cause", cause}});
}

void DrillEvents::DrillEnd(const std::string& status) { Event("drill_end", {{"status", status}}); }

void DrillEvents::Error(const std::string& node, const std::string& message) {
  Event("error", {{"node", node}, {"message", message}});
}

void DrillEvents::Error(const std::string& message) { Event("error", {{"message", message}}); }

void DrillEvents::AgentLost(const std::string& node, const std::string& reason,
                            const std::vector<std::string>& faults_left, int64_t wall_ns) {
  Event("agent_lost",
        {{"node", node}, {"reason", reason}, {"faults_left", faults_left}, {"wall_ns", wall_ns}});
}

void DrillEvents::AgentReconnected(const std::string& node, const std::string& address,
                                   int64_t wall_ns) {
  Event("agent_reconnected", {{"node", node}, {"address", address}, {"wall_ns", wall_ns}});
}

void DrillEvents::SlurmNode(const std::string& node, const std::string& state,
                            const std::string& reason) {
  Event("slurm_node", {{"node", node}, {"state", state}, {"reason", reason}});
}

void DrillEvents::SlurmJob(const std::string& job, const std::string& state) {
  Event("slurm_job", {{"job", job}, {"state", state}});
}

void DrillEvents::FaultsSwept(const std::string& node, const std::vector<std::string>& ids,
                              int64_t wall_ns) {
  RunRecorder* rec = rec_.load();
  if (rec == nullptr) return;
  rec->Event("faults_swept", {{"node", node},
                              {"ids", ids},
                              {"at_s", rec->TimeOfWall(wall_ns)},
                              {"wall_ns", wall_ns},
                              {"by", "the restarted agent's journal sweep"}});
}

void DrillEvents::Phase(Action::Kind kind, const std::string& phase, const std::string& reason) {
  Event(ActionKindName(kind), {{"phase", phase}, {"reason", reason}});
}

void DrillEvents::FaultApply(const FaultSpec& f, const std::string& reason) {
  Event("fault_apply", {{"id", f.id},
                        {"kind", f.kind},
                        {"node", f.node},
                        {"target", f.params.value("interface", "")},
                        {"params", f.params},
                        {"reason", reason}});
}

void DrillEvents::FaultApplied(const FaultSpec& f, const std::string& target, bool verified) {
  Json fields = {{"id", f.id}, {"kind", f.kind}, {"node", f.node}, {"target", target}};
  if (!f.scope.empty()) fields["scope"] = f.scope;
  fields["verified"] = verified;
  Event("fault_applied", std::move(fields));
}

void DrillEvents::FaultRevert(const std::string& id, const std::string& node,
                              const std::string& reason) {
  Event("fault_revert", {{"id", id}, {"node", node}, {"reason", reason}});
}

void DrillEvents::FaultReverted(const std::string& id, const std::string& node, bool verified) {
  Event("fault_reverted", {{"id", id}, {"node", node}, {"verified", verified}});
}

void DrillEvents::ImpactSeen(const std::string& id, Duration after) {
  Event("impact_seen", {{"id", id}, {"after_s", ToSeconds(after)}});
}

void DrillEvents::CulpritNamed(const std::string& id, const Culprit& c) {
  Json fields = {{"id", id},
                 {"node", c.node},
                 {"element", c.element},
                 {"confidence", c.confidence},
                 {"evidence", c.evidence}};
  if (!c.link.empty()) fields["link"] = c.link;
  if (c.rank) fields["rank"] = *c.rank;
  Event("culprit", std::move(fields));
}

void DrillEvents::WorkloadStart(const std::string& node, const std::string& workload,
                                const std::vector<std::string>& argv) {
  Json fields = {{"node", node}, {"argv", argv}};
  if (!workload.empty()) fields["workload"] = workload;
  Event("workload_start", std::move(fields));
}

void DrillEvents::WorkloadRestart(const std::string& node, const std::vector<std::string>& argv,
                                  int attempt) {
  Event("workload_start", {{"node", node}, {"argv", argv}, {"attempt", attempt}});
}

void DrillEvents::WorkloadExited(const std::string& node, const std::string& workload,
                                 int exit_code, const std::string& log_tail) {
  RunRecorder* rec = rec_.load();
  if (rec == nullptr) return;
  Json fields = {{"node", node}, {"exit_code", exit_code}};
  if (!workload.empty()) fields["workload"] = workload;
  rec->Event("workload_exit", std::move(fields));
  (void)rec->WriteFile(LogName(workload), log_tail);
}

void DrillEvents::WorkloadKilled(const std::string& node, const Json& exit_code) {
  Event("workload_exit", {{"node", node}, {"exit_code", exit_code}, {"forced", true}});
}

void DrillEvents::WorkloadLog(const std::string& workload, const std::string& log_tail) {
  (void)WriteFile(LogName(workload), log_tail);
}

void DrillEvents::WorkloadHung(const std::string& reason) {
  Event("workload_failed", {{"cause", "hang"}, {"reason", reason}});
}

void DrillEvents::WorkloadFailed(int exit_code) {
  Event("workload_failed",
        {{"cause", "exit"},
         {"exit_code", exit_code},
         {"reason", "the workload exited with code " + std::to_string(exit_code)}});
}

void DrillEvents::RanksKilled(const std::string& node, int count) {
  Event("ranks_killed", {{"node", node}, {"count", count}});
}

void DrillEvents::RelaunchScheduled(int restart, Duration in, int64_t last_step) {
  Event("workload_relaunch_scheduled",
        {{"restart", restart}, {"in_s", ToSeconds(in)}, {"last_step", last_step}});
}

void DrillEvents::Resumed(int restart, int attempt, int64_t resumed_step, int64_t iterations_lost) {
  Event("workload_restart", {{"restart", restart},
                             {"attempt", attempt},
                             {"resumed_step", resumed_step},
                             {"iterations_lost", iterations_lost}});
}

void DrillEvents::Counters(const std::string& node, const Json& whole, const Json& push) {
  if (rec_.load() == nullptr) return;  // not recording yet: nothing is written
  bool base_written = false;
  {
    std::lock_guard<std::mutex> lock(counters_mu_);
    base_written = !counters_whole_.insert(node).second;
  }
  if (base_written && push.value(proto::key::kDelta, false)) {
    Event("counters", {{"node", node},
                       {"counters", push.value(proto::key::kCounters, Json::object())},
                       {"delta", true}});
  } else {
    Event("counters", {{"node", node}, {"counters", whole}});
  }
}

void DrillEvents::Ras(const std::string& node, const Json& sample) {
  Json e = {{"node", node},
            {"wall_ns", sample.value(proto::key::kWallNs, Json())},
            {"answered", sample.value(proto::key::kAnswered, false)}};
  if (sample.contains(proto::key::kRasStatus)) e["ras_status"] = sample[proto::key::kRasStatus];
  if (sample.contains(proto::key::kRasError)) e["ras_error"] = sample[proto::key::kRasError];
  Event("ras", std::move(e));
}

void DrillEvents::IbWatch(const std::string& node, const Result<Json>& reply) {
  if (!reply.ok()) {
    Event("ib_watch", {{"node", node}, {"ib_error", reply.status().message()}});
  } else if (reply->value(proto::key::kWatching, false)) {
    Event("ib_watch",
          {{"node", node}, {"devices", reply->value(proto::key::kDevices, Json::array())}});
  }
}

void DrillEvents::IbAsync(const std::string& node, const Json& push) {
  Event("ib_async", {{"node", node},
                     {"device", push.value(proto::key::kDevice, "")},
                     {"port", push.value(proto::key::kPort, 0)},
                     {"event", push.value(proto::key::kEvent, "")},
                     {"wall_ns", push.value(proto::key::kWallNs, Json())}});
}

void DrillEvents::DigestMissing() {
  Event("digest_check", {{"digest", nullptr},
                         {"reason", "the job printed no final digest (it did not end cleanly)"}});
}

void DrillEvents::DigestCheck(int64_t steps, const std::string& digest, const std::string& expected,
                              const std::string& key, std::optional<double> tolerance) {
  Json body = {{"steps", steps},
               {"digest", digest},
               {"expected", expected},
               {"intact", DigestsAgree(digest, expected, tolerance)}};
  if (key != "digest") body["key"] = key;
  if (tolerance) body["tolerance"] = *tolerance;
  Event("digest_check", std::move(body));
}

void DrillEvents::Residue(const Json& items) { Event("residue", {{"items", items}}); }

void DrillEvents::RunDirKept(const std::string& node, const std::string& reason) {
  Event("run_dir_kept", {{"node", node}, {"reason", reason}});
}

void DrillEvents::Metrics(const std::string& node, const std::string& workload, const Json& records,
                          int64_t offset_ns, int attempt) {
  if (RunRecorder* rec = rec_.load()) rec->Metrics(node, records, offset_ns, attempt, workload);
}

Status DrillEvents::WriteFile(const std::string& name, const std::string& content) {
  RunRecorder* rec = rec_.load();
  if (rec == nullptr) return FailedPrecondition(name + ": the run directory does not exist yet");
  return rec->WriteFile(name, content);
}

}  // namespace fdrill

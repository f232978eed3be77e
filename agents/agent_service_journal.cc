// AgentService's reverts and its journal: one fault reverted and cleared
// from the journal, a journal that cannot be written (no fault is applied
// until it can), revert and revert_all, and the sweep that reverts what a
// previous life of the agent left applied. The other requests:
// agent_service.cc; the timer: agent_service_tick.cc.
#include "agents/agent_service.h"
#include "common/core/json.h"
#include "common/core/log.h"
#include "common/wire/protocol.h"

namespace fdrill {

Status AgentService::RevertOne(const std::string& id, Active& active) {
  if (auto s = active.fault->Revert(); !s.ok()) return s;
  if (auto s = active.fault->VerifyReverted(); !s.ok()) return s;
  // Reverted: a journal that cannot record it does not keep the fault (a
  // restart reverts it again, which is harmless), it only stops new ones.
  ClearJournalled(id);
  return Status::Ok();
}

void AgentService::ClearJournalled(const std::string& id) {
  if (Status s = journal_.Clear(id); !s.ok()) {
    JournalFailed(s);
    unjournalled_.insert(id);
  }
}

void AgentService::JournalFailed(const Status& s) {
  if (journal_error_.empty())
    spdlog::error("journal: {}; faults are refused until it can be written (reverts go on)",
                  s.message());
  journal_error_ = s.message();
}

Status AgentService::JournalWritable() {
  if (journal_error_.empty()) return Status::Ok();
  RetryJournal();
  if (journal_error_.empty()) return Status::Ok();
  return FailedPrecondition("journal cannot be written: " + journal_error_ +
                            "; no fault is applied until it can (free the state directory " +
                            config_.state_dir + ")");
}

void AgentService::RetryJournal() {
  journal_retry_at_ = clock_.Now();
  if (Status s = journal_.Prepare(); !s.ok()) return JournalFailed(s);
  for (auto it = unjournalled_.begin(); it != unjournalled_.end();) {
    if (Status s = journal_.Clear(*it); !s.ok()) return JournalFailed(s);
    it = unjournalled_.erase(it);
  }
  spdlog::warn("journal: written again ({}); faults are accepted", journal_.path());
  journal_error_.clear();
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
    ClearJournalled(id);  // a full disk stops new faults, never this sweep
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

}  // namespace fdrill

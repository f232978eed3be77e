#include "injectors/ranks.h"

#include "workloads/job_rank.h"

namespace fdrill {

bool IsWorkloadRank(const ProcInfo& info) {
  return info.exe_name == kWorkloadExe || info.env.count(kJobRankEnv) > 0;
}

Result<std::vector<RankProc>> FindRanks(ProcessTable& procs, std::optional<int> rank) {
  auto pids = procs.Pids();
  if (!pids.ok()) return pids.status();
  const std::string own_ns = procs.OwnNetNs();
  std::vector<RankProc> out;
  for (int pid : *pids) {
    if (pid == procs.OwnPid()) continue;
    auto info = procs.Inspect(pid);
    if (!info.ok()) continue;  // ended while we looked
    if (!IsWorkloadRank(*info) || info->net_ns != own_ns || info->state == 'Z') continue;
    const int r = RankOf(*info);
    if (rank && r != *rank) continue;
    out.push_back({pid, info->start_ticks, r, info->cpu_ticks});
  }
  if (out.empty()) {
    return NotFound(std::string(rank ? "params.rank: " : "") + "no workload rank (" + kWorkloadExe +
                    ", or a job's process under fdrill job-rank; " + DescribeRanks(rank) +
                    ") runs on this node; is the workload started, and is this the node "
                    "the rank was placed on?");
  }
  return out;
}

Status CheckRankAccess(const Host& host) {
  if (host.procs == nullptr) return Unsupported("this agent has no process table");
  if (host.procs->OwnNetNs().empty())
    return Unsupported("cannot read /proc/self/ns/net: no process namespaces");
  auto pids = host.procs->Pids();
  return pids.ok() ? Status::Ok() : pids.status();
}

std::string DescribeRanks(std::optional<int> rank) {
  return rank ? "rank " + std::to_string(*rank) : "every rank on this node";
}

Result<std::optional<int>> ReadRankParam(ParamReader& p) {
  auto r = p.Int("rank", -1, 0, 1 << 30);  // -1 (absent): every rank on the node
  if (!r.ok()) return r.status();
  return *r >= 0 ? std::optional<int>(static_cast<int>(*r)) : std::nullopt;
}

Status RankFault::Capture() {
  if (Status s = CheckRankAccess(host_); !s.ok()) return s;
  auto ranks = FindRanks(*host_.procs, rank_);
  if (!ranks.ok()) return ranks.status().Annotate(kind_);
  ranks_ = *ranks;
  return Status::Ok();
}

std::string RankFault::ResolvedTarget() const {
  if (ranks_.empty()) return DescribeRanks(rank_);
  std::string ranks, pids;
  for (const RankProc& r : ranks_) {
    ranks += (ranks.empty() ? "" : ", ") + (r.rank >= 0 ? std::to_string(r.rank) : "?");
    pids += (pids.empty() ? "" : ", ") + std::to_string(r.pid);
  }
  if (ranks_.size() == 1) return "rank " + ranks + " (pid " + pids + ")";
  return "ranks " + ranks + " (pids " + pids + ")";
}

Status RankFault::Load(const Json& saved) {
  auto ranks = RanksFromJson(saved.value("ranks", Json::array()));
  if (!ranks.ok()) return ranks.status();
  ranks_ = *ranks;
  return Status::Ok();
}

Json RanksToJson(const std::vector<RankProc>& ranks) {
  Json out = Json::array();
  for (const auto& r : ranks)
    out.push_back({{"pid", r.pid}, {"start_ticks", r.start_ticks}, {"rank", r.rank}});
  return out;
}

Result<std::vector<RankProc>> RanksFromJson(const Json& j) {
  std::vector<RankProc> out;
  if (!j.is_array()) return InvalidArgument("saved ranks: not a list");
  for (const auto& r : j) {
    if (!r.is_object() || !r.contains("pid") || !r.contains("start_ticks")) {
      return InvalidArgument("saved ranks: an entry lacks pid or start_ticks");
    }
    out.push_back({r["pid"].get<int>(), r["start_ticks"].get<uint64_t>(), r.value("rank", -1)});
  }
  return out;
}

}  // namespace fdrill

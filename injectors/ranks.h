// The workload's ranks on this node, for rank_pause and rank_kill.
//
// A rank is a process whose executable is fdrill-collective, or a process
// of the operator's own job that `fdrill job-rank` started (it carries
// FDRILL_JOB_RANK in its environment; the wrapper itself does not), in the
// agent's own network namespace (on the emulated fabric every node shares one pid
// namespace, so the namespace is what says "this node"; on a real host run
// the agent in the ranks' namespace), optionally with a given rank number
// (processes.h RankOf: OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID,
// FDRILL_RANK). Only fdrill's own workload is ever selected: no other
// process on the node can be paused or killed through these faults.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/core/json.h"
#include "common/host/host.h"
#include "common/host/processes.h"
#include "injectors/injector.h"
#include "injectors/params.h"

namespace fdrill {

inline constexpr char kWorkloadExe[] = "fdrill-collective";

// Whether INFO is one of the workload's rank processes (of any node).
bool IsWorkloadRank(const ProcInfo& info);

struct RankProc {
  int pid = 0;
  uint64_t start_ticks = 0;
  int rank = -1;
  uint64_t cpu_ticks = 0;  // user + system CPU time so far (ProcInfo)
};

// Every matching process (NotFound, naming params.rank, when none).
Result<std::vector<RankProc>> FindRanks(ProcessTable& procs, std::optional<int> rank);

// Ok when this node can select ranks at all (the process table is there and
// /proc shows our own network namespace); used by Check() and the probes.
Status CheckRankAccess(const Host& host);

// "rank 3" or "every rank on this node", for messages and plans.
std::string DescribeRanks(std::optional<int> rank);

Json RanksToJson(const std::vector<RankProc>& ranks);
Result<std::vector<RankProc>> RanksFromJson(const Json& j);

// params.rank: a rank number, or absent for every rank on the node.
Result<std::optional<int>> ReadRankParam(ParamReader& p);

// What rank_pause and rank_kill share: the pre-drill Check (the ranks do not
// exist yet), Capture selecting the ranks, and their (pid, start time) list
// as the saved state a journal sweep needs.
class RankFault : public Fault {
 public:
  RankFault(Host host, std::optional<int> rank, std::string kind)
      : host_(host), rank_(rank), kind_(std::move(kind)) {}
  Status Check() override { return CheckRankAccess(host_); }
  Status Capture() override;
  Json Saved() const override { return {{"ranks", RanksToJson(ranks_)}}; }
  Status Load(const Json& saved) override;
  std::string Target() const override { return "ranks"; }
  // "rank 2 (pid 1234)", "ranks 0, 1 (pids 11, 12)"; before Capture, the
  // params' "rank 2" or "every rank on this node".
  std::string ResolvedTarget() const override;

 protected:
  Host host_;
  std::optional<int> rank_;
  std::string kind_;
  std::vector<RankProc> ranks_;
};

}  // namespace fdrill

// The workload's ranks on this node, for rank_pause and rank_kill.
//
// A rank is a process whose executable is fdrill-collective, in the agent's
// own network namespace (on the emulated fabric every node shares one pid
// namespace, so the namespace is what says "this node"; on a real host run
// the agent in the ranks' namespace), optionally with a given rank number
// (processes.h RankOf: OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID,
// FDRILL_RANK). Only fdrill's own workload is ever selected: no other
// process on the node can be paused or killed through these faults.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/host/host.h"
#include "harness/host/processes.h"
#include "harness/wire/wire.h"

namespace fdrill {

inline constexpr char kWorkloadExe[] = "fdrill-collective";

struct RankProc {
  int pid = 0;
  uint64_t start_ticks = 0;
  int rank = -1;
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

}  // namespace fdrill

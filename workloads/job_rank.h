// A rank of the operator's own job (issue 50), as `fdrill job-rank` runs it
// under mpirun or srun: which rank it is, the variables its framework wants,
// and its step lines as metrics records. Pure functions; the process
// handling is in harness/cli/cmd_job_rank.cc.
//
// Launchers name a rank their own way: Open MPI OMPI_COMM_WORLD_RANK /
// _SIZE / _LOCAL_RANK, Slurm SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID,
// PMIx PMIX_RANK with PMIX_SIZE... and torchrun RANK / WORLD_SIZE /
// LOCAL_RANK itself. A PyTorch job (env://) reads RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR and MASTER_PORT.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/core/json.h"
#include "common/core/result.h"
#include "workloads/step_lines.h"

namespace fdrill {

// What every process of a job rank carries in its environment, set by
// `fdrill job-rank` for the job (not for itself): the rank faults select
// a job's processes by it (injectors/ranks.h IsWorkloadRank).
inline constexpr char kJobRankEnv[] = "FDRILL_JOB_RANK";

struct LaunchedRank {
  int rank = 0;
  int world = 0;
  int local_rank = 0;
  std::string source;  // "mpirun", "srun", "pmix", "torchrun"
};

// The first launcher whose rank and size are both set and parse; NotFound
// naming the variables looked for when none is.
Result<LaunchedRank> RankFromLauncher(const std::map<std::string, std::string>& env);

// framework "pytorch": RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
// MASTER_PORT, and with SOCKET_IFNAME ("fab0,fab1") GLOO_SOCKET_IFNAME
// (gloo binds where the host name resolves otherwise: loopback on the
// emulated fabric); every framework: PYTHONUNBUFFERED=1 (a Python job's
// lines arrive as printed, not in 4 KiB blocks), kJobRankEnv. A variable
// the launcher already set (torchrun's, the operator's) is kept.
struct FrameworkVars {
  std::string framework;
  std::string master_addr;
  int master_port = 0;
  std::string socket_ifname;
};
std::map<std::string, std::string> FrameworkEnv(const std::map<std::string, std::string>& env,
                                                const LaunchedRank& r, const FrameworkVars& f);

// The opt-in file protocol (`metrics: file`): a job that wants its own
// exact times writes one JSON object per step, a line each, to the file
// $FDRILL_METRICS names: {"step": N, "time_ms": X} (or "time_s"; with
// neither, the interval between two records as read), optional "loss",
// "tokens_per_s", "samples_per_s". nullopt for a line that is not such an
// object (its step an integer >= 0, its numbers numbers).
inline constexpr char kMetricsFileEnv[] = "FDRILL_METRICS";
std::optional<StepRecord> ParseMetricsFileLine(std::string_view line);

// One step record as a metrics record (docs/reference/formats.md): iter and step are
// the step number, op "step", and the record stands for STEPS steps (a
// trainer that logs every 10th step): time_ms is their whole time, bytes
// is STEPS x kStepBytes and busbw_gbps = algbw_gbps = steps per second, so
// the report's rate of a job reads in steps/s.
struct StepMeta {
  int rank = 0;
  int nranks = 0;
  std::string host;
  int64_t wall_ns = 0;
  int64_t mono_ns = 0;
  bool restarted = false;
};
inline constexpr uint64_t kStepBytes = 1000000000;  // one step = 1e9 "bytes": rate in steps/s
std::string StepMetricsLine(const StepRecord& s, int64_t steps, const StepMeta& meta);
Json StepMetricsJson(const StepRecord& s, int64_t steps, const StepMeta& meta);

}  // namespace fdrill

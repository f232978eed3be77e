// The scheduler's kill, for `fdrill plan`: how long Slurm lets the drill's
// allocation run before it ends it, asked the way Slurm users do,
// `squeue --noheader --jobs $SLURM_JOB_ID --format %L` (time left: the
// job's time limit minus the time it has used). When the job reaches its
// limit, slurmctld signals every step (SIGTERM, then SIGKILL KillWait later)
// and the job ends TIMEOUT: a collective hung on a dead link ends then, as
// a kill, not as NCCL's error.
//
// squeue prints times as Slurm's secs2time_str does: "D-HH:MM:SS" with
// days, else "H:MM:SS", else "M:SS"; "UNLIMITED" for no limit and
// "NOT_SET" before one is established (squeue(1), %l and %L).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/core/result.h"
#include "common/core/units.h"
#include "common/host/host.h"
#include "harness/scenario/nccl_ib_timeout.h"

namespace fdrill {

// "1-02:03:04", "2:03:04", "3:04" -> the duration; "UNLIMITED" -> nullopt;
// anything else (NOT_SET, INVALID, garbage) is an InvalidArgument quoting it.
Result<std::optional<Duration>> ParseSlurmTime(std::string_view text);

// squeue's %L for `job`; nullopt: UNLIMITED. An error carrying squeue's
// stderr when it fails (no such job, slurmctld not answering).
Result<std::optional<Duration>> SlurmTimeLeft(ProcessRunner& runner, const std::string& job);

// The plan line: NCCL's time to turn a dead link into an error (`t`)
// against the time the allocation has left (`left`, as SlurmTimeLeft
// answered) and the drill's own length: flags a kill that comes before
// NCCL's error, a drill longer than the allocation, and a hang that only
// the time limit ends (or nothing ends, when unlimited).
std::string DescribeSchedulerKill(const NcclIbErrorTime& t, const std::string& job,
                                  const Result<std::optional<Duration>>& left,
                                  Duration drill_length);

}  // namespace fdrill

// How long NCCL takes to turn a dead InfiniBand or RoCE path into an error.
// NCCL's IB transport sets each queue pair's local ACK timeout to
// 4.096 us x 2^NCCL_IB_TIMEOUT and its retry count to NCCL_IB_RETRY_CNT; a
// send that is never acknowledged is tried RETRY_CNT + 1 times before the
// HCA completes it with IBV_WC_RETRY_EXC_ERR ("error 12"), which NCCL
// reports as ncclRemoteError. So a link down for less than that is ridden
// through (the retries succeed once it is back), and one down for longer
// ends the job in an error — unless NCCL_IB_TIMEOUT is 0 or 32 and up,
// which the InfiniBand spec reads as "wait forever": a hang.
//
// Defaults of NCCL 2.23 and later (the 2.28 this project builds against):
// NCCL_IB_TIMEOUT 20, NCCL_IB_RETRY_CNT 7, so 4.096 us x 2^20 x 8 = 34.4 s
// (NVIDIA/nccl docs/env.rst; ../shared/reference/fault-mechanisms.md 2.4).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/core/result.h"
#include "common/core/units.h"
#include "harness/scenario/scenario.h"

namespace fdrill {

inline constexpr int kNcclIbTimeoutDefault = 20;
inline constexpr int kNcclIbRetryCntDefault = 7;

struct NcclIbErrorTime {
  int timeout = kNcclIbTimeoutDefault;     // NCCL_IB_TIMEOUT
  int retry_cnt = kNcclIbRetryCntDefault;  // NCCL_IB_RETRY_CNT
  bool timeout_set = false;                // from the environment, not the default
  bool retry_set = false;
  // The time from the link's death to the error; nullopt: never (a hang).
  std::optional<Duration> after;
};

// From the job's environment (name -> value). A value that is not an
// integer in NCCL's range is an InvalidArgument naming the variable.
Result<NcclIbErrorTime> PredictNcclIbError(const std::map<std::string, std::string>& env);

// The NCCL_* environment the drill's job gets (NCCL_IB_TIMEOUT here,
// NCCL_RAS_ADDR for the RAS watch): `environ` (the
// controller's, which mpirun -x and srun's default --export=ALL pass on),
// then `-x NAME=VALUE` in launcher_args (mpirun) and NAME=VALUE items of
// `--export=` (srun).
std::map<std::string, std::string> JobNcclEnv(const WorkloadSpec& w, char** environ);

// How long fault `f` keeps a link (or IB port) down in `phase`, as its
// kind's registry row says (LinkDown, injectors/injector.h): a flap's
// `down`, else the fault's window; nullopt for a kind that takes no link
// down.
std::optional<Duration> LinkDownWindow(const FaultSpec& f, const PhaseSpec& phase);

// What NCCL should make of each link-down fault of an RDMA workload (fault
// id -> "rode_through" | "error" | "hang"): down for less than the time to
// error, the retries succeed once it is back; longer, the job ends in an
// error; NCCL_IB_TIMEOUT 0 or >= 32, it hangs. Empty for a TCP workload,
// which NCCL's IB timeout does not govern.
std::map<std::string, std::string> PredictJobOutcomes(const NcclIbErrorTime& t, const Scenario& s);

// One line for `fdrill plan`: the prediction and what it means for the
// drill's link faults (the longest link-down window against it; a hang when
// it is "never"; a restart policy's hang_timeout shorter than it).
std::string DescribeNcclIbError(const NcclIbErrorTime& t, const Scenario& s);

}  // namespace fdrill

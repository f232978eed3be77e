// Summary: what the analysis concludes about one run, the data model behind
// summary.json and report.md (the keys docs/reference/summary-json.md lists, plus
// `name`, `baseline`, per-fault `node`/`culprit` and `errors`). An absent
// number (std::nullopt) is written as null: "never recovered" or "no data",
// never a made-up 0. Plain values; built by Analyze (analysis.h).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "reports/localise.h"
#include "reports/run_data.h"

namespace fdrill {

enum class Verdict { kPass, kFail, kError };

// "pass" | "fail" | "error".
const char* VerdictName(Verdict verdict);

// `fdrill run`'s exit code for a verdict: pass 0, fail 1, error 2.
int ExitCodeForVerdict(Verdict verdict);

struct PhaseStats {
  std::string name;
  double start_s = 0;
  double end_s = 0;
  int count = 0;  // iterations that ended in [start_s, end_s)
  std::optional<double> iter_ms_p50;
  std::optional<double> iter_ms_p99;
  std::optional<double> busbw_gbps_p50;  // the median over iterations: a column of its own
  // Time-weighted (TimeWeightedBusbw, reports/series.h): work done / time
  // over the phase, a stall counting for its length.
  std::optional<double> busbw_gbps_mean;
  // The baseline's time-weighted busbw / busbw_gbps_mean, as a fault's
  // slowdown is: how much slower the job ran over the whole phase (a
  // neighbour's load, not only a fault's).
  std::optional<double> slowdown;
};

struct Baseline {
  std::string phase;  // where it was measured; see README.md
  int count = 0;
  // The span of its iterations (first start .. last end): the reference
  // the localisation compares a fault's counters and waits with.
  double start_s = 0;
  double end_s = 0;
  std::optional<double> busbw_median;
  // Time-weighted mean of the iterations' busbw (bytes moved / time): what a
  // fault's window is measured as, so an untouched job reads 1.00, not the
  // few percent by which a median of a skewed series exceeds its mean.
  std::optional<double> busbw_mean;
  // What the job moves per second of wall time (busbw x iteration time,
  // summed, over the baseline's span, gaps between iterations included): the
  // rate lost_gpu_s and ettr count progress against.
  std::optional<double> progress_gbps;
  std::optional<double> mad;
  std::optional<double> band_low;
  // No phase is named "baseline": the band was learned from a phase the
  // drill also measures (a burn-in's one long phase). Its busbw_mean and
  // progress_gbps then count only the iterations inside its band, so a
  // degradation in it does not lower the reference, and anomalies are
  // looked for inside it too, against a rolling band (reports/anomalies.cc).
  bool learned = false;
};

// One rank while a fault was on: medians over the slowdown's iterations.
struct RankBreakdown {
  int rank = 0;
  std::string node;
  double time_ms_p50 = 0;  // inside the collective
  double wait_ms_p50 = 0;  // in the line-up before it (waiting for peers)
};

// What one fault did to one tenant (workloads:): the same definitions,
// measured on that workload's own iterations against its own baseline.
struct WorkloadEffect {
  std::string workload;
  std::optional<double> slowdown;
  std::optional<double> time_to_impact_s;
  std::optional<double> time_to_recover_s;
  std::optional<double> stall_ms;
};

// One tenant of the drill and its own baseline.
struct WorkloadStats {
  std::string name;
  std::vector<std::string> nodes;
  int ranks = 0;
  std::string start;  // the phase it arrived with; empty: from the start
  Baseline baseline;
  std::vector<PhaseStats> phases;  // its own iterations; slowdown against its baseline
};

// Who noticed a fault, and how long after its apply (summary.json
// faults[].detectors): fdrill's own live localisation (or, without it, the
// impact the metrics show); when the drill watched the NCCL job's RAS
// service, RAS (a process missing or dead, or RAS no longer answering); when
// agents listened to RDMA devices' async events, the HCA itself (PORT_ERR,
// DEVICE_FATAL...).
struct Detection {
  std::string detector;           // "fdrill" | "nccl_ras" | "ib_async"
  std::optional<double> after_s;  // null: it noticed nothing before the next fault
  std::string what;               // "named link n1 fab0", "RAS on n0: 1 process missing",
                                  // "n1 mlx5_0 port 1: PORT_ERR"
};

struct FaultStats;

// Where fault `f`'s stretch ends: the next fault's apply after its own, or
// +infinity for the last. What the job did and who noticed (job_outcome.h,
// detectors.h) are judged over [f.applied_at_s, this).
double StretchEnd(const std::vector<FaultStats>& faults, const FaultStats& f);

struct FaultStats {
  std::string id;
  std::string kind;
  std::string node;
  std::string target;
  std::string scope;  // what its kind reaches (fault_applied's); "" in older runs
  double applied_at_s = 0;
  std::optional<double> reverted_at_s;
  std::optional<double> slowdown;
  std::optional<double> time_to_impact_s;
  std::optional<double> time_to_recover_s;
  std::optional<double> stall_ms;
  // Seconds from the apply to the workload's first failing exit at or after
  // it (a killed rank ends an Open MPI job); null when the job did not fail.
  std::optional<double> job_failed_after_s;
  // GPU-seconds the fault cost: ranks x the seconds of [applied, recovered)
  // the job did not progress at its baseline rate — slow iterations, time
  // with no iteration at all (a dead job, a restart) and steps a relaunch
  // redid (README.md).
  std::optional<double> lost_gpu_s;
  // What the evidence names while the fault was on (reports/localise.h),
  // null when nothing stood out; culprit / culprit_rank / culprit_link are
  // its node, rank and link ("n1 fab0 (qdisc_overlimits +1234)").
  std::optional<Culprit> localisation;
  std::optional<std::string> culprit_link;
  std::vector<RankBreakdown> ranks;  // by rank
  std::optional<std::string> culprit;
  std::optional<int> culprit_rank;
  // Seconds from the apply to the controller's first live `culprit` event
  // naming this fault's node (and link, for a link fault); null when it
  // named none in the window.
  std::optional<double> time_to_localise_s;
  // With tenants: the fault's effect on each, in plan order (the top-level
  // numbers above are the first workload's).
  std::vector<WorkloadEffect> workloads;
  std::vector<Detection> detectors;
  // What the job did under the fault (reports/job_outcome.h): "error",
  // "hang" or "rode_through"; and what NCCL's IB timeout predicted, for a
  // link-down fault of an RDMA workload (plan.json predicted_job).
  std::string job_outcome;
  std::optional<std::string> predicted_job;
  // The detector with the smallest after_s; "" when none noticed.
  std::string first_detector;
  // Faults in force at the same time as this one (reports/compound.h), and
  // what its numbers were measured over: "window" (it was alone: applied
  // to reverted, and its recovery), "alone" (the seconds it alone was in
  // force, alone_s of them) or "compound" (it never was: the compound
  // window's numbers, and the culprit its kind's evidence names there).
  std::vector<std::string> overlapped_with;
  std::string measured_over = "window";
  std::optional<double> alone_s;
  // Another fault was already in force at its apply (impact cannot be told
  // apart: time_to_impact_s null), or still was at its revert (the recovery
  // counts until the job was back in band after that one too).
  bool applied_under_another = false;
  bool reverted_under_another = false;
};

// One fault's part of a compound window's lost GPU·s.
struct FaultShare {
  std::string fault;
  std::optional<double> share;  // 0..1; null when the evidence does not separate it
};

// Faults in force at the same time: the stretch from the first moment two
// of them were (start_s) to the last (end_s), together_s seconds of it with
// two or more. Its numbers are over those seconds; its lost GPU·s are
// counted here and in no fault's lost_gpu_s. Culprits: what each signal
// class names there (the links' counters, the ranks' line-up and CPU time).
struct CompoundWindow {
  std::vector<std::string> faults;  // ids, in apply order
  double start_s = 0;
  double end_s = 0;
  double together_s = 0;
  std::optional<double> slowdown;
  std::optional<double> stall_ms;
  std::optional<double> lost_gpu_s;
  std::vector<Culprit> culprits;
  // How the lost GPU·s split between its faults: "alone" (in proportion to
  // the rate each lost when alone), "evidence" (the last-arriving rank's
  // share of the wait, the rest to the link's fault), "" (not separable:
  // every share null).
  std::string share_basis;
  std::vector<FaultShare> shares;
};

// A stretch of iterations below the baseline band that no fault the drill
// applied (or its recovery, or a restart) explains, with what the evidence
// names for it. Only stretches the localisation can name are anomalies.
struct Anomaly {
  double start_s = 0;
  double end_s = 0;
  int iterations = 0;
  std::optional<double> slowdown;  // the baseline's mean over the stretch's
  Culprit culprit;
};

// How much a node's counter rose over a phase (from `counters` events; see
// README.md): link_downed, symbol_error, NVLink CRC/replay, netdev drops, ...
struct CounterDelta {
  std::string phase;
  std::string node;
  std::string counter;
  double delta = 0;
};

// One link's traffic and evidence over one phase, from `counters` samples
// (CounterIncrease: resets are resets): a node's netdev ("fab0"), IB port
// ("ib/mlx5_0/1") or NVLink ("gpu0/nvlink3").
struct LinkPhase {
  std::string phase;
  std::optional<double> tx_gbps;  // bits sent / the phase's seconds, in Gbit/s; null: not counted
  std::optional<double> rx_gbps;
  double drops = 0;            // *_dropped, qdisc_drops, *discards
  double errors = 0;           // *_errors, symbol_error, link_error_recovery, dl_*
  double shaped = 0;           // qdisc_overlimits: packets a shaper held back
  double carrier_changes = 0;  // carrier_changes + link_downed
  // tx_gbps over the link's capacity (inventory.json's switch port that
  // cables it, rate_bps); null when the capacity is not known.
  std::optional<double> utilisation;
};
struct LinkStats {
  std::string node;
  std::string link;
  std::optional<double> capacity_gbps;
  std::vector<LinkPhase> phases;  // in phase order
};
// A node's transport over one phase: TCP segments retransmitted and
// retransmit timeouts (tcp.retrans_segs, tcp.timeouts).
struct TransportPhase {
  std::string phase;
  double retrans_segs = 0;
  double timeouts = 0;
};
struct NodeTransport {
  std::string node;
  std::vector<TransportPhase> phases;
};

// One failure of the job and what followed (workload_failed, then the
// workload_restart of the relaunch, if any).
struct RestartStats {
  double failed_at_s = 0;
  std::string cause;  // exit | hang
  std::string reason;
  std::optional<std::string> fault;         // the fault applied last before the failure
  std::optional<double> time_to_detect_s;   // that fault's apply -> the failure seen
  std::optional<double> time_to_restart_s;  // the failure seen -> the relaunched job's first record
  std::optional<int64_t> resumed_step;
  std::optional<int64_t> iterations_lost;  // steps redone
  std::optional<double> back_in_band_s;    // first record -> back in the baseline band
};

struct Rollback {
  int restarts = 0;
  int64_t iterations_lost = 0;
  bool data_intact = true;
  int64_t wrong_elements = 0;  // summed over every record
  std::vector<RestartStats> failures;
  // The job's final digest and its fault-free run's (mode: train:
  // fdrill-train-ref for as many steps; a command: expect.digest's rerun);
  // nullopt when not checked. digest_key: the job's line it came from;
  // digest_tolerance: the relative difference allowed (unset: bitwise).
  std::optional<int64_t> digest_steps;
  std::optional<std::string> digest;
  std::optional<std::string> expected_digest;
  std::string digest_key = "digest";
  std::optional<double> digest_tolerance;
  std::optional<double> digest_difference;  // relative, with a tolerance
  bool digest_intact = false;
};

// A limit or a measurement: nothing (null), a flag or a number.
using ExpectValue = std::variant<std::monostate, bool, double>;

// A fault in force on an agent that was lost (agent_lost's faults_left),
// or one a restarted agent's journal sweep reverted.
struct LeftFault {
  std::string id;
  std::string kind;                  // from the fault's fault_applied (or fault_apply); "" unknown
  std::string target;                // likewise
  std::optional<double> swept_at_s;  // when the sweep reverted it; null: no sweep said so
  std::optional<int64_t> swept_wall_ns;
};

// An agent the drill lost (its connection dropped, or its lease failed),
// what was left applied on its node meanwhile, and whether and when it
// came back and its journal sweep reverted that.
struct AgentLoss {
  std::string node;
  std::string reason;
  double lost_at_s = 0;
  std::optional<int64_t> lost_wall_ns;
  std::optional<double> back_at_s;  // agent_reconnected; null: it did not come back
  std::vector<LeftFault> faults_left;
};

// What Slurm said during the drill (slurm_node / slurm_job events), each
// change in order: a node's state and reason, or the allocation's job.
struct SlurmChange {
  double t = 0;        // seconds since the drill's start
  std::string node;    // "" for the job
  std::string job;     // "" for a node
  std::string from;    // the state before ("" for the first sample)
  std::string to;      // "idle", "allocated", "down*", "RUNNING", "ended", ...
  std::string reason;  // a node's; "none" when Slurm gives none
};

struct ExpectationResult {
  std::string name;
  ExpectValue limit;
  ExpectValue measured;
  bool pass = false;
};

struct Summary {
  std::string name;
  // plan.json's: "GB/s" (busbw) or "steps/s" (a job's steps). Every rate
  // below (busbw_*, progress_gbps) is in it; RateName() says what it is.
  std::string rate_unit = "GB/s";
  bool Steps() const { return rate_unit == "steps/s"; }
  const char* RateName() const { return Steps() ? "step rate" : "busbw"; }
  Verdict verdict = Verdict::kError;
  Baseline baseline;  // the first workload's, with tenants
  std::vector<PhaseStats> phases;
  std::vector<FaultStats> faults;
  // Where faults overlapped (reports/compound.h); empty when none did.
  std::vector<CompoundWindow> compound;
  // Every fault's lost_gpu_s and every compound window's, summed: each
  // second of the job counted once. Null when no fault measured one.
  std::optional<double> lost_gpu_s;
  std::vector<WorkloadStats> workloads;  // with tenants (plan.json workloads), each one
  // Effective-time ratio after the baseline: the wall time the work done
  // would have taken at the baseline's rate (progress_gbps), redone steps
  // left out, over the wall time from the baseline's end to the last
  // iteration; 1 for a job no fault touched. Null without a baseline.
  std::optional<double> ettr;
  bool residue_checked = false;
  std::vector<ResidueItem> residue;
  // Agents lost during the drill, in the order they were lost.
  std::vector<AgentLoss> agents_lost;
  // On a Slurm fabric: every change of what Slurm said; empty elsewhere.
  std::vector<SlurmChange> slurm;
  Rollback rollback;
  std::vector<CounterDelta> counters;  // empty when no counters were sampled
  std::vector<LinkStats> links;        // by node, then link; empty without counters
  std::vector<NodeTransport> transport;
  // Slowdowns no fault of the drill explains (reports/README.md): a link
  // degraded behind fdrill's back shows here with its culprit.
  std::vector<Anomaly> anomalies;
  std::vector<ExpectationResult> expectations;
  // Why the drill stopped before its timeline ended (a stop condition, a
  // gate's timeout); null when it ran to the end.
  std::optional<std::string> stopped;
  std::vector<std::string> errors;
};

}  // namespace fdrill

// A drill scenario as loaded and validated: everything `fdrill run` needs,
// with every unit parsed, every selector resolved to nodes, every repeat and
// ramp expanded, and every fault's params checked by its injector's parser.
// Loading touches nothing on any machine. Schema: scenarios/README.md.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/core/units.h"
#include "fabric/fabric_shape.h"
#include "harness/scenario/blast_radius.h"
#include "harness/scenario/topology.h"

namespace fdrill {

struct FaultSpec {
  std::string id;    // unique in the scenario; "<phase>-<kind>" when not given
  std::string kind;  // injector name
  std::string node;  // "n1"; a selector naming several nodes becomes one fault each
  // node names a switch of the emulated fabric ("rail0-leaf1", switch: in
  // the scenario); its agent holds the fault, on the port params.interface.
  bool on_switch = false;
  // What its kind reaches (injectors/injector.h ScopeName: "interface",
  // "rank", "switch", ...): the fault_applied event carries it, so a report
  // knows which evidence speaks for the fault in a window shared with others.
  std::string scope;
  Json params;     // validated by the injector's parser
  int line = 0;    // 1-based line in the scenario file, for messages
  int column = 0;  // 1-based column of the fault's entry
  // Window inside its phase: applied `at` after the phase starts, reverted
  // `length` later; length 0 means "at the phase's end" (fixed phases only).
  Duration at{};
  Duration length{};
  // The agent reverts the fault by itself once it has been on this long,
  // whatever the controller does. Default: its window plus the lease TTL.
  Duration max_duration{};
};

// "Wait until stable": the phase ends once the job has been back in the
// baseline band for the scenario's recovery window (at least `duration`
// after it began), or at `timeout`.
struct GateSpec {
  Duration timeout{};
  bool abort_on_timeout = true;  // false: go on with the next phase
};

struct PhaseSpec {
  std::string name;     // unique; a repeat's copies are "name#k"
  Duration duration{};  // a gated phase's minimum
  std::optional<GateSpec> gate;
  std::vector<FaultSpec> faults;
  Duration MaxDuration() const { return gate ? std::max(duration, gate->timeout) : duration; }
};

// What happens when the job fails mid-drill (torchrun's --max-restarts):
// the agents stop what is left of it and the controller relaunches it from
// its latest checkpoint, waiting backoff, 2 x backoff, 4 x ... between
// tries. A job with no rank completing an iteration for hang_timeout counts
// as failed too. max_restarts 0: a failure ends the drill.
struct RestartSpec {
  int max_restarts = 0;
  Duration backoff = std::chrono::seconds(1);
  std::optional<Duration> hang_timeout;
};

struct WorkloadSpec {
  // A tenant of `workloads:` (its key, and the nodes it runs on, in
  // inventory order); empty for `workload:`, which runs on every node.
  std::string name;
  std::vector<std::string> nodes;
  // A tenant launched when this phase starts (a neighbour arriving
  // mid-drill) rather than before the timeline; empty: from the start.
  // Never the first tenant, whose baseline the drill measures.
  std::string start;
  std::string mode = "sweep";    // sweep | train (fdrill-collective --train)
  int64_t steps = 0;             // train: steps 0..steps-1
  int64_t checkpoint_every = 0;  // train: a checkpoint after every K-th step
  RestartSpec restart;
  bool Train() const { return mode == "train"; }
  // Whether op takes a reduction (redop): fdrill-collective refuses --redop
  // for the others.
  bool Reduces() const { return op == "all_reduce" || op == "reduce_scatter" || op == "reduce"; }
  std::string op = "all_reduce";
  std::string dtype = "float32";
  std::string redop = "sum";
  uint64_t size_bytes = 4u << 20;
  int ranks_per_node = 1;
  std::string backend = "mpi";
  int warmup = 5;
  // fdrill-collective --lineup: "barrier" (each timed collective between
  // two barriers: its time is the collective's, a straggler shows in its
  // peers' wait) or "none" (back to back, as a job runs them).
  std::string lineup = "barrier";
  // Real clusters (a hosts or slurm fabric) only. `command`: run this
  // instead of fdrill-collective (nccl-tests' all_reduce_perf, a training
  // script); `output` says how its stdout becomes metrics: "fdrill" (rank
  // JSONL files, fdrill-collective), "nccl-tests" (the result table, parsed
  // live), "none" (no iterations: the drill reports exit and time only).
  // `launcher` starts it from the controller's host: mpirun (rsh_agent
  // ssh|rsh|any command), srun (inside the allocation), or none (the
  // command launches itself). launcher_args go before the program.
  std::vector<std::string> command;
  std::string output = "fdrill";
  std::string launcher = "mpirun";
  std::vector<std::string> launcher_args;
  std::string rsh_agent = "ssh";
  bool External() const { return !command.empty(); }
  // `metrics:` (issue 50): the job's step lines, read by `fdrill job-rank`
  // around each rank (with launcher: none, from the launcher's output) — a preset
  // (workloads/step_lines.h) or a pattern with named groups; output is then "steps" (records in
  // steps/s). `framework: pytorch` gives every rank RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and
  // MASTER_PORT from its launcher's variables. Either wraps the command in
  // `fdrill job-rank`. checkpoint_every, for a command, is the job's own
  // interval in steps: what a restart may redo at most.
  std::string metrics_preset;
  std::string metrics_pattern;
  bool metrics_file = false;  // metrics: file — the job's own records ($FDRILL_METRICS)
  std::string framework;
  bool Steps() const { return output == "steps"; }
  // launcher: none (torchrun, a site's wrapper) starts the ranks itself:
  // its step lines are read from its output on the controller's host.
  bool WrapsRanks() const {
    return External() && launcher != "none" && (Steps() || !framework.empty());
  }
  // How the job's data moves between nodes: tcp (kernel TCP/IP, IPoIB
  // included), rdma (InfiniBand or RoCE verbs, which bypass tc and
  // netfilter), or auto: rdma for NCCL (backend nccl, nccl-tests output),
  // which uses verbs wherever an HCA is, tcp otherwise. Before anything is
  // touched the agents refuse a fault that cannot reach an RDMA workload's
  // traffic on its interface (injectors/rdma_reach.h).
  std::string transport = "auto";
  bool Rdma() const {
    return transport == "rdma" ||
           (transport == "auto" && (backend == "nccl" || output == "nccl-tests"));
  }
};

// Stop conditions on the live metrics: any one met aborts the drill, which
// still reverts everything. Unset ones are not checked.
struct StopSpec {
  std::optional<double> min_busbw_gbps;        // below this for `for_iterations` in a row
  std::optional<Duration> max_iteration_time;  // one iteration (or no iteration) this long
  std::optional<int64_t> max_wrong_elements;   // data-check failures summed over the run
  std::optional<int> max_errors;               // error events (agent, apply, revert)
  int for_iterations = 3;
  bool Any() const {
    return min_busbw_gbps || max_iteration_time || max_wrong_elements || max_errors;
  }
};

// A limit on one summary metric: per fault (fault empty: every fault) or
// for the run. See kMetricNames in loader.cc for what can be named.
struct MetricLimit {
  std::string metric;  // "slowdown", "stall_ms", "rollback.iterations_lost", ...
  std::string fault;   // a fault id, or "" for every fault (per-fault metrics)
  // slowdown over a whole phase (baseline busbw / the phase's), not a fault.
  std::string phase;
  std::optional<double> max;
  std::optional<double> min;
};

// expect.workloads.NAME: limits on what each fault did to one tenant
// (summary faults[].workloads.NAME); metrics name per-fault metrics only.
struct WorkloadExpect {
  std::optional<double> max_slowdown;
  std::optional<double> max_time_to_recover_s;
  std::vector<MetricLimit> metrics;
};

struct ExpectSpec {
  std::optional<double> max_slowdown;
  std::optional<double> max_time_to_recover_s;
  bool no_residue = true;
  bool data_intact = true;
  // expect.digest: equal — a command's final "digest: HEX" line against the
  // same command's fault-free run (after the drill, on loopback, as many
  // ranks). mode: train's digest is always checked (fdrill-train-ref).
  // expect.digest: {key: K, tolerance: T} — for a framework that is not
  // bitwise deterministic: the final "K: NUMBER" line instead, equal to the
  // fault-free run's within a relative difference of T.
  bool digest_equal = false;
  std::string digest_key = "digest";
  std::optional<double> digest_tolerance;
  std::vector<MetricLimit> metrics;
  std::vector<std::pair<std::string, WorkloadExpect>> workloads;  // in the file's order
  // What the job must do under each fault (reports/job_outcome.h):
  // "error_not_hang" (no fault leaves it hung: it ends in an error or rides
  // through), "rides_through" (it survives every fault), "as_predicted"
  // (each link-down fault's outcome is what NCCL's IB timeout predicts:
  // harness/scenario/nccl_ib_timeout.h); "" not checked.
  std::string job;
};

struct Scenario {
  std::string file;
  std::string text;  // the file as read, written to the run directory as run
  std::string name;
  std::string description;
  int nodes = 0;                        // fabric size the drill needs
  FabricShape emulated;                 // fabric.emulated's shape (nodes as above)
  std::string hosts_file;               // set when the inventory is a hosts file
  bool slurm = false;                   // the inventory is SLURM_JOB_NODELIST
  std::string slurm_nodelist;           // ... as it read at load time
  std::vector<std::string> host_names;  // the hosts file's (or allocation's) names, in order
  int agent_port = 7100;                // hosts/slurm: where every node's fdrill-agent listens
  // workload:, or with workloads: a copy of the first tenant (tenants run
  // sweeps with no restart policy, so what the rest of the drill reads of
  // it — mode, restart — is the same for all of them).
  WorkloadSpec workload;
  // workloads: (emulated fabric only): several named jobs, each on its own
  // nodes, no node in two; empty for workload:.
  std::vector<WorkloadSpec> tenants;
  std::vector<PhaseSpec> phases;  // repeats expanded, in order
  Duration lease_ttl = std::chrono::seconds(5);
  Duration lease_renew = std::chrono::seconds(1);
  // The blast radius in nodes: the most the faults in force at once may
  // reach, a switch counting every node behind it (blast_radius.max_nodes
  // when that is given; the two are one limit).
  int max_faulted_nodes = 1;
  // topology: FILE (relative to the scenario), or `emulated`: the map of the
  // emulated fabric's declared shape (TopologyYaml, what `fabric up` writes);
  // and safety.blast_radius: the limits on faults in force at once, checked
  // when the scenario loads.
  std::optional<Topology> topology;
  BlastRadiusSpec blast_radius;
  StopSpec stop;
  int recovery_window_iters = 5;
  ExpectSpec expect;
  // fdrill run --time-scale: what ScaleTimes multiplied the drill's
  // windows by (1: as written).
  double time_scale = 1;

  // Sum of the phases' longest durations (a gate's timeout).
  Duration TotalDuration() const;
  std::vector<std::string> NodeNames() const;  // n0..n{nodes-1}, or the hosts file's
  // What runs: the tenants, or `workload` on every node (its name empty).
  std::vector<WorkloadSpec> Workloads() const;
  // The switches faults name, sorted: the switch agents the drill connects to.
  std::vector<std::string> SwitchTargets() const;
  bool Emulated() const { return hosts_file.empty() && !slurm; }
  // "emulated n0..n3", "hosts file F", "Slurm allocation gpu[01-04]".
  std::string FabricName() const;
};

// Reads and validates FILE. Errors read "FILE:LINE:COL: what; hint".
// The emulated fabrics' management networks and each node's interface on
// them (fabric/fabric_state.h: the default fabric's controller 198.19.0.254
// on fdm-br, node i's mgmt0 198.19.0.<i+1>, the switches' agents after them;
// a named fabric's the same in 198.19.K.0/24): no fault may reach them
// (tests/fabric checks the fabric's layout agrees).
inline constexpr char kEmulatedMgmtNet[] = "198.19.0.0/16";
inline constexpr char kEmulatedMgmtInterface[] = "mgmt0";

// The largest scenario file LoadScenario reads; a larger one, or one that
// is not a regular file (a directory, /dev/zero, a FIFO), is refused unread.
inline constexpr size_t kMaxScenarioBytes = 1u << 20;
Result<Scenario> LoadScenario(const std::string& path);

// fdrill run --time-scale FACTOR: every phase's duration, every gate's
// timeout and every fault's window (at, length, max_duration) times FACTOR
// (0.1 to 10), rounded to the millisecond. What belongs to the job or the
// mechanism keeps its length: a fault's own params (a flap's period), the
// restart policy's backoff and hang_timeout, the lease, stop conditions,
// expectations. InvalidArgument starting with FLAG (the flag as given, like
// "--time-scale 20") when FACTOR is out of range.
Status ScaleTimes(Scenario* s, double factor, const std::string& flag);
// `base_dir` resolves a relative hosts file (LoadScenario: the file's directory).
Result<Scenario> ParseScenario(const std::string& text, const std::string& file_name,
                               const std::string& base_dir = ".");

// The per-fault and run metrics an expectation may name.
const std::vector<std::string>& ExpectableMetrics();

}  // namespace fdrill

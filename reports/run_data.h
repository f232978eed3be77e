// RunData: what reports/ knows of a run directory, decoded from plan.json,
// events.jsonl and metrics.jsonl (docs/reference/formats.md is the contract). Plain
// values with no JSON types in them, so the analysis is pure C++ and tests can
// build a RunData by hand. Produced by LoadRunDir (run_dir.h); read-only after.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reports/fingerprint.h"
#include "reports/metric_table.h"

namespace fdrill {

// One entry of a `residue` event: a difference between the pre- and
// post-drill state. before/after are the recorded values, JSON-encoded when
// they were not strings.
struct ResidueItem {
  std::string node;
  std::string object;
  std::string before;
  std::string after;
};

// One line of events.jsonl. Only the keys the reports use are decoded; which
// are set depends on `type` (see docs/reference/formats.md).
struct Event {
  double t = 0;
  std::string type;
  std::string name;              // drill_start
  std::string phase;             // phase_start, phase_end
  std::string id;                // fault_*
  std::string kind;              // fault_apply, fault_applied
  std::string node;              // most types; optional on error
  std::string target;            // fault_apply, fault_applied; JSON-encoded when not a string
  std::string scope;             // fault_applied: what its kind reaches ("interface", "rank", ...)
  std::string link;              // culprit: the interface or port named; empty for a rank/node
  std::string element;           // culprit: "link n1 fab0", "rank 2 (n2)", "node n3"
  std::string message;           // error
  std::string reason;            // abort, agent_lost, slurm_node
  std::string state;             // slurm_node, slurm_job: what Slurm said
  std::string job;               // slurm_job
  std::string cause;             // abort: "job" when the workload ended the drill, else
  std::string status;            // drill_end: completed | aborted | error
  std::optional<bool> verified;  // fault_applied, fault_reverted
  std::optional<int> exit_code;  // workload_exit
  std::optional<bool> forced;    // workload_exit: stopped by the drill
  std::optional<int64_t> iterations_lost;  // workload_restart, when it says
  std::optional<int64_t> resumed_step;     // workload_restart
  std::optional<int64_t> attempt;          // workload_start: 1, 2, ... for a relaunch
  std::optional<int64_t> steps;            // digest_check: steps the digest covers
  std::string digest;                      // digest_check: the job's; empty if it printed none
  std::string expected;                    // digest_check: the fault-free run's
  std::string digest_key;                  // digest_check: the job's line it came from
  std::optional<double> tolerance;         // digest_check: relative; unset: bitwise
  std::vector<ResidueItem> items;          // residue
  // agent_lost: faults_left; faults_swept: the ids the restarted agent's
  // journal sweep reverted.
  std::vector<std::string> ids;
  std::optional<int64_t> wall_ns;  // agent_lost, agent_reconnected, faults_swept
  std::optional<double> at_s;      // faults_swept: when the sweep ended (controller t)
  // counters: one sample of a node's cumulative counters (link_downed,
  // symbol_error, NVLink CRC/replay, netdev drops, ...), name -> value.
  std::vector<std::pair<std::string, double>> counters;
  // counters: as written, only what changed since the node's previous
  // counters event (docs/reference/formats.md); LoadRunDir makes every sample whole.
  std::optional<bool> counters_delta;
  // ras: whether the node's NCCL RAS service answered, and what it said of
  // the job (processes missing, processes dead); its error in `message`.
  std::optional<bool> answered;
  std::optional<int64_t> ras_missing;
  std::optional<int64_t> ras_dead;
  // ib_watch: how many RDMA devices the node's agent listened to (its error
  // in `message`); ib_async: the device, port (0: the whole device) and
  // event ("PORT_ERR") an HCA reported.
  std::optional<int64_t> ib_devices;
  std::string device;
  std::optional<int64_t> port;
  std::string ib_event;
};

// plan.json's expectations; std::nullopt = not checked.
// A limit on one summary metric (plan.json expectations.metrics[]): metric
// names as the scenario loader accepts them (ExpectableMetrics); `fault`
// names a fault id or the id it was written with (FaultRefMatches), empty
// for every fault; a dotted metric is one number for the run.
struct MetricExpectation {
  std::string metric;
  std::string fault;
  std::string phase;  // slowdown over that phase (PhaseStats::slowdown)
  std::optional<double> max;
  std::optional<double> min;
};

// expectations.workloads.NAME: what each fault may do to one tenant
// (faults[].workloads.NAME); metrics are per-fault ones.
struct WorkloadExpectations {
  std::string name;
  std::optional<double> max_slowdown;
  std::optional<double> max_time_to_recover_s;
  std::vector<MetricExpectation> metrics;
};

struct Expectations {
  std::vector<MetricExpectation> metrics;
  std::vector<WorkloadExpectations> workloads;
  std::optional<double> max_slowdown;
  std::optional<double> max_time_to_recover_s;
  std::optional<bool> no_residue;
  std::optional<bool> data_intact;
  // expect.job: "error_not_hang" | "rides_through" | "as_predicted".
  std::optional<std::string> job;
};

// plan.json workloads[]: a tenant sharing the fabric.
struct PlanWorkload {
  std::string name;
  std::vector<std::string> nodes;
  int ranks = 0;
  std::string start;  // a phase's name: it arrived then (no baseline of its own)
};

// plan.json: the resolved drill.
struct Plan {
  std::string name;
  std::vector<std::string> nodes;
  int ranks = 0;                        // the first workload's, with tenants
  std::vector<PlanWorkload> workloads;  // empty: one workload on every node
  int recovery_window_iters = 5;
  // "GB/s" (busbw: fdrill-collective, nccl-tests) or "steps/s" (a job's
  // step lines, whose records carry steps/s as their rate).
  std::string rate_unit = "GB/s";
  Expectations expectations;
  // plan.json predicted_job: fault id -> what NCCL's IB timeout predicts
  // ("rode_through" | "error" | "hang"); only link-down faults of an RDMA
  // workload.
  std::map<std::string, std::string> predicted_job;
};

// inventory.json's switches (the emulated fabric's, docs/reference/formats.md): what
// the report's fabric map draws above the nodes.
struct InventoryPort {
  std::string name;  // "swp3", "up0", "dn1"
  std::string to;    // "n3:fab0", "rail0-spine:dn1"
  double rate_bps = 0;
  // `to` as (node or switch, its link): ("n3", "fab0"); nullopt without a colon.
  std::optional<std::pair<std::string, std::string>> FarEnd() const {
    const size_t colon = to.find(':');
    if (colon == std::string::npos) return std::nullopt;
    return std::pair{to.substr(0, colon), to.substr(colon + 1)};
  }
};
struct InventorySwitch {
  std::string name;  // "rail0-leaf1", "rail0-spine", "sw"
  std::string role;  // "leaf" | "spine"
  std::vector<InventoryPort> ports;
};

// The other end of the cable at NODE's LINK ("sw", "swp2" -> "n2", "fab0";
// and back), from the switches' cabling; nullopt when not known.
inline std::optional<std::pair<std::string, std::string>> FarEnd(
    const std::vector<InventorySwitch>& switches, const std::string& node,
    const std::string& link) {
  const std::string end = node + ":" + link;
  for (const InventorySwitch& sw : switches) {
    for (const InventoryPort& p : sw.ports) {
      if (sw.name == node && p.name == link) {
        if (auto far = p.FarEnd()) return far;
        continue;
      }
      if (p.to == end) return std::pair{sw.name, p.name};
    }
  }
  return std::nullopt;
}

struct RunData {
  Plan plan;
  std::vector<InventorySwitch> switches;  // empty: none recorded (a real cluster)
  // What each node ran (inventory.json; reports/fingerprint.h); empty when
  // the run has no inventory.
  Fingerprint fingerprint;
  std::vector<Event> events;  // in file order (the controller's timeline)
  MetricTable metrics;        // in file order
  // Problems that did not stop loading (e.g. metrics.jsonl absent because the
  // workload never started); they become entries of the summary's errors[].
  std::vector<std::string> load_notes;
};

}  // namespace fdrill

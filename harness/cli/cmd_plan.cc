// fdrill plan FILE: every action the drill would take, on which node, when,
// and the exact mechanism — the injector's own argv lines — touching nothing.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "common/core/units.h"
#include "harness/cli/cli_common.h"
#include "harness/cli/commands.h"
#include "harness/controller/cluster_launch.h"
#include "harness/controller/engine.h"
#include "harness/controller/slurm_time_left.h"
#include "harness/scenario/nccl_ib_timeout.h"
#include "harness/scenario/scenario.h"
#include "injectors/injector.h"

extern char** environ;

namespace fdrill {

namespace {

// The mechanism line of a fault's apply or revert, as the injector states it;
// with apply, its notes after it (what depends on what Capture will find).
std::string HowOf(const FaultSpec& f, bool apply) {
  auto fault = MakeFault(f.kind, f.params, Host{});
  if (!fault.ok()) return fault.status().message();
  std::string how, notes;
  for (const auto& line : (*fault)->Mechanism()) {
    const bool is_apply = line.rfind("apply: ", 0) == 0;
    if (is_apply == apply && (line.rfind("apply: ", 0) == 0 || line.rfind("revert: ", 0) == 0)) {
      how = line.substr(line.find(": ") + 2);
    }
    if (apply && line.rfind("note: ", 0) == 0) notes += "\n" + std::string(20, ' ') + line;
  }
  return how + notes;
}

}  // namespace

int PrintPlan(const std::string& file) {
  auto s = LoadScenario(file);
  if (!s.ok()) return Fail(s.status());
  // NCCL over IB/RoCE: when a dead link becomes an error
  // (harness/scenario/nccl_ib_timeout.h); a nonsense setting stops the plan.
  std::optional<NcclIbErrorTime> nccl;
  if (s->workload.Rdma()) {
    auto predicted = PredictNcclIbError(JobNcclEnv(s->workload, environ));
    if (!predicted.ok()) return Fail(predicted.status().Annotate("the job's environment"));
    nccl = *predicted;
  }
  if (s->workload.External()) {
    std::printf("drill %s: %d nodes (%s), the command %s x %d rank(s)/node, at most %s\n",
                s->name.c_str(), s->nodes, s->FabricName().c_str(),
                JoinArgv(s->workload.command).c_str(), s->workload.ranks_per_node,
                FormatDuration(s->TotalDuration()).c_str());
  } else if (!s->tenants.empty()) {
    std::printf("drill %s: %d nodes (%s), %zu workloads, at most %s\n", s->name.c_str(), s->nodes,
                s->FabricName().c_str(), s->tenants.size(),
                FormatDuration(s->TotalDuration()).c_str());
    for (const auto& t : s->tenants) {
      std::string nodes;
      for (const auto& n : t.nodes) nodes += (nodes.empty() ? "" : ",") + n;
      std::printf("workload %s on %s: %s %s %s x %d rank(s)/node (%s)%s\n", t.name.c_str(),
                  nodes.c_str(), t.dtype.c_str(), t.op.c_str(), FormatSize(t.size_bytes).c_str(),
                  t.ranks_per_node, t.backend.c_str(),
                  t.start.empty() ? "" : (", launched when phase " + t.start + " starts").c_str());
    }
  } else {
    std::printf("drill %s: %d nodes (%s), %s %s %s x %d rank(s)/node (%s), at most %s\n",
                s->name.c_str(), s->nodes, s->FabricName().c_str(), s->workload.dtype.c_str(),
                s->workload.op.c_str(), FormatSize(s->workload.size_bytes).c_str(),
                s->workload.ranks_per_node, s->workload.backend.c_str(),
                FormatDuration(s->TotalDuration()).c_str());
  }
  if (s->workload.Train()) {
    const auto& r = s->workload.restart;
    std::printf(
        "workload: training loop, %lld steps, a checkpoint every %lld; restarts: %d (backoff %s, "
        "doubling)%s\n",
        static_cast<long long>(s->workload.steps),
        static_cast<long long>(s->workload.checkpoint_every), r.max_restarts,
        FormatDuration(r.backoff).c_str(),
        r.hang_timeout ? ("; a job with no iteration for " + FormatDuration(*r.hang_timeout) +
                          " counts as failed")
                             .c_str()
                       : "");
  }
  if (s->workload.WrapsRanks()) {
    // Every rank's own line, as the supervisor builds it (the run id and
    // directories are the run's: shown as placeholders).
    const bool emulated = s->Emulated();
    const std::string ifnames = emulated ? RailInterfaces(s->emulated.rails) : "";
    JobPlaces at{.checkpoint_dir = emulated ? "<n0 run dir>/checkpoint" : "",
                 .metrics_path = emulated ? "{tmpdir}/fdrill-<run>/rank-{rank}.jsonl"
                                          : "/tmp/fdrill-<run>.{host}/rank-{rank}.jsonl",
                 .master_addr = emulated ? "198.18.0.1" : s->NodeNames().front(),
                 .master_port = 29500,
                 .ifnames = ifnames,
                 .nice = emulated ? kEmulatedJobNice : 0};
    std::printf("each rank (%s): %s\n",
                emulated ? "on every node, under the fabric's own mpirun line from n0"
                         : "under the launch line below",
                JoinArgv(JobRankArgv(s->workload, BinDir() + "/fdrill", at)).c_str());
    if (s->workload.framework == "pytorch") {
      std::printf(
          "  it sets RANK, WORLD_SIZE, LOCAL_RANK from the launcher's OMPI_COMM_WORLD_* or "
          "SLURM_* (kept where set), MASTER_ADDR, MASTER_PORT%s, PYTHONUNBUFFERED=1\n",
          ifnames.empty() ? "" : (", GLOO_SOCKET_IFNAME=" + ifnames).c_str());
    }
    if (s->workload.Steps()) {
      if (s->workload.metrics_file) {
        std::printf("metrics: the job's own records, a JSON line per step, in $FDRILL_METRICS\n");
      } else {
        std::printf("metrics: a record per step line (%s%s) of every rank's output\n",
                    s->workload.metrics_preset.empty() ? "pattern " : "preset ",
                    s->workload.metrics_preset.empty() ? s->workload.metrics_pattern.c_str()
                                                       : s->workload.metrics_preset.c_str());
      }
    }
  }
  if (!s->Emulated()) {
    // The job starts on this host, as the user running fdrill run.
    std::vector<std::string> program = s->workload.command;
    if (s->workload.WrapsRanks()) program = {BinDir() + "/fdrill", "job-rank", "..."};
    if (program.empty()) program = {BinDir() + "/fdrill-collective", "..."};
    std::printf("launch (on this host): %s\n",
                JoinArgv(ClusterLaunchArgv(*s, program, "<run dir>/hostfile")).c_str());
    std::printf(
        "agents: fdrill-agent on every node at port %d (mutual TLS, --tls-dir or "
        "/etc/fdrill/pki)\n",
        s->agent_port);
    if (s->workload.External() && !s->workload.Steps()) {
      std::printf("metrics: %s\n",
                  s->workload.output == "nccl-tests"
                      ? "nccl-tests result rows from the job's output, one per iteration"
                      : "none (output: none): the drill measures exit and time only");
    }
  }
  if (nccl) std::printf("%s\n", DescribeNcclIbError(*nccl, *s).c_str());
  // In a Slurm allocation the time limit kills the job too: which comes
  // first (harness/controller/slurm_time_left.h). squeue only reads.
  if (nccl && (s->slurm || s->workload.launcher == "srun")) {
    const char* job = std::getenv("SLURM_JOB_ID");
    if (job == nullptr || *job == '\0') {
      std::printf(
          "scheduler: no SLURM_JOB_ID here (not inside an allocation): NCCL's error time is not "
          "checked against a time limit\n");
    } else {
      RealProcessRunner squeue;
      std::printf("%s\n",
                  DescribeSchedulerKill(*nccl, job, SlurmTimeLeft(squeue, job), s->TotalDuration())
                      .c_str());
    }
  }
  std::printf(
      "safety: lease %s renewed every %s; the faults in force at once reach at most %d node(s) "
      "(a switch counts every node behind it)\n",
      FormatDuration(s->lease_ttl).c_str(), FormatDuration(s->lease_renew).c_str(),
      s->max_faulted_nodes);
  BlastRadiusSpec limits = s->blast_radius;
  if (!limits.max_nodes) limits.max_nodes = s->max_faulted_nodes;
  std::printf("blast radius: %s\n",
              BlastRadiusSummary(s->phases, s->topology ? &*s->topology : nullptr, limits).c_str());
  if (s->stop.Any()) {
    std::string stop;
    if (s->stop.min_busbw_gbps)
      stop += " busbw below " + std::to_string(*s->stop.min_busbw_gbps) + " GB/s for " +
              std::to_string(s->stop.for_iterations) + " iterations;";
    if (s->stop.max_iteration_time)
      stop += " an iteration (or no iteration) longer than " +
              FormatDuration(*s->stop.max_iteration_time) + ";";
    if (s->stop.max_wrong_elements)
      stop += " more than " + std::to_string(*s->stop.max_wrong_elements) + " wrong elements;";
    if (s->stop.max_errors)
      stop += " more than " + std::to_string(*s->stop.max_errors) + " errors;";
    std::printf("stop (revert everything, verdict fail) on:%s\n", stop.c_str());
  }
  std::printf("times assume every until-stable phase turns stable at its minimum duration\n");
  // Walk the engine itself, as the drill will, with every gate stable.
  DrillEngine engine(*s);
  Duration now{};
  for (int guard = 0; guard < 1000000 && !engine.Finished(); ++guard) {
    for (const Action& a : engine.Advance(now, EngineInput{now, std::nullopt})) {
      const double at = ToSeconds(a.at);
      const PhaseSpec& phase = s->phases[static_cast<size_t>(a.phase)];
      if (a.kind == Action::kPhaseStart) {
        std::printf("%8.1fs  phase %s (%s)\n", at, phase.name.c_str(), a.reason.c_str());
      } else if (a.kind == Action::kApply || a.kind == Action::kRevert) {
        const FaultSpec& f = phase.faults[static_cast<size_t>(a.fault)];
        std::printf("%8.1fs    %-6s %s on %s: %s\n", at,
                    a.kind == Action::kApply ? "apply" : "revert", f.id.c_str(), f.node.c_str(),
                    HowOf(f, a.kind == Action::kApply).c_str());
      } else if (a.kind == Action::kDone) {
        std::printf(
            "%8.1fs  end: revert_all on every agent, compare with the snapshot, write the report\n",
            at);
      }
    }
    auto next = engine.NextDeadline();
    if (!next) break;
    now = std::max(now, *next);
  }
  return 0;
}

}  // namespace fdrill

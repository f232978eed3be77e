// fdrill-collective: runs one collective over and over on every rank, timing
// each iteration, checking every element of every result, and writing one
// metrics record per iteration per rank; or, with --train, a training loop
// with checkpoints. See README.md for flags, metrics and exit codes. main()
// owns the exit codes and the order of the phases: flags (no MPI yet), MPI,
// the plan for this rank count, backend, metrics file, the loop, the summary.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/host/launch_env.h"
#include "workloads/backends.h"
#include "workloads/cli.h"
#include "workloads/libraries.h"
#include "workloads/metrics.h"
#include "workloads/mpi_world.h"
#include "workloads/plan.h"
#include "workloads/runner.h"
#include "workloads/stop.h"
#include "workloads/summary.h"
#include "workloads/train.h"

namespace fdrill {
namespace {

// One write per line, so lines of ranks sharing mpirun's stderr do not mix.
void PrintError(const Status& status) {
  std::cerr << ("fdrill-collective: " + status.message() + "\n") << std::flush;
}

// Setup fails the same way on every rank or is agreed (AgreeAllOk), so it
// ends with a normal exit. A stuck NCCL init is a collective timeout (4);
// everything else means this run cannot go ahead here (2).
int SetupExitCode(const Status& status) {
  return status.code() == StatusCode::kDeadlineExceeded ? kExitCollective : kExitUsage;
}

int SetupFailed(const Status& status) {
  if (!IsPeerFailure(status)) PrintError(status);
  return SetupExitCode(status);
}

// Opens this rank's metrics file, if any; agreed, as only some ranks may fail.
Result<std::unique_ptr<MetricsWriter>> OpenMetrics(const Config& config, World& world) {
  Status local = Status::Ok();
  std::unique_ptr<MetricsWriter> writer;
  if (!config.jsonl.empty()) {
    // A resumed training run continues its predecessor's records.
    auto opened = MetricsWriter::Open(
        ExpandPathTemplate(config.jsonl, world.rank(), TmpDirFromEnv(), HostName()),
        /*append=*/config.train.has_value());
    if (opened.ok()) {
      writer = std::move(opened).value();
    } else {
      local = opened.status();
    }
  }
  if (Status s = AgreeAllOk(world, local); !s.ok()) return s;
  return writer;
}

SummaryTable Table(const Config& config, int nranks) {
  SummaryTable table;
  table.op = config.op;
  table.dtype = config.dtype;
  table.redop = config.redop;
  table.root = config.root;
  table.nranks = nranks;
  return table;
}

// A peer may be inside a collective this rank will never join: end the
// whole job rather than hang it, with the records that wait in the batch
// written first (MPI_Abort runs no destructor).
[[noreturn]] void EndJob(MpiWorld& world, MetricsWriter* metrics, const Status& status) {
  if (metrics != nullptr) (void)metrics->Flush();
  PrintError(status);
  world.Abort(status.code() == StatusCode::kInvalidArgument ? kExitUsage : kExitCollective);
}

// Every rank's MPI and backend libraries as loaded, formatted on rank 0 for
// the end of its output (libraries.h); "" on the other ranks. Collective.
Result<std::string> LoadedLines(World& world, const Backend& backend) {
  std::vector<LoadedLibrary> libs = {
      {"mpi", LibraryValue(MpiLibraryVersion(), LoadedFrom("libmpi.so"))}};
  for (LoadedLibrary& lib : backend.Libraries()) libs.push_back(std::move(lib));
  auto all = world.GatherToRoot(EncodeRankLibraries(HostName(), libs));
  if (!all.ok()) return all.status();
  return FormatLoadedLines(*all);
}

int Benchmark(const Config& config, const std::vector<SizeStep>& plan, MpiWorld& world,
              Backend& backend, MetricsWriter* metrics, const std::string& loaded) {
  Result<RunOutcome> outcome = RunWorkload(config, plan, world, backend, metrics, std::cerr);
  if (!outcome.ok()) EndJob(world, metrics, outcome.status());
  if (Status s = backend.Close(); !s.ok()) EndJob(world, metrics, s);
  if (world.rank() == 0) {
    SummaryTable table = Table(config, world.size());
    for (const SizeOutcome& size : outcome->sizes) {
      table.rows.push_back({size.bytes, size.layout.count, size.time, size.wrong});
    }
    std::cout << FormatSummary(table) << std::flush;
    if (outcome->stopped)
      std::cout << "# stopped after " << outcome->iterations << " timed iterations\n";
    std::cout << loaded << std::flush;
  }
  return outcome->wrong > 0 ? kExitDataCheck : kExitOk;
}

int Train(const Config& config, const SizeStep& size, TrainStart& start, MpiWorld& world,
          Backend& backend, MetricsWriter* metrics, const std::string& loaded) {
  Result<TrainOutcome> outcome =
      RunTraining(config, size, start, world, backend, metrics, std::cerr);
  if (!outcome.ok()) EndJob(world, metrics, outcome.status());
  if (Status s = backend.Close(); !s.ok()) EndJob(world, metrics, s);
  if (world.rank() == 0) {
    SummaryTable table = Table(config, world.size());
    if (outcome->steps_run > 0)
      table.rows.push_back({size.bytes, size.layout.count, outcome->time, outcome->wrong});
    std::cout << FormatSummary(table);
    if (outcome->steps_run == 0) {
      std::cout << "# train: no step left to run (all " << config.train->steps << " done)\n";
    } else {
      std::cout << "# train: steps " << outcome->first_step << ".."
                << outcome->first_step + outcome->steps_run - 1 << " of 0.."
                << config.train->steps - 1
                << (start.restarted
                        ? " (resumed at step " + std::to_string(outcome->first_step) + ")"
                        : "")
                << "\n";
    }
    // The digest is of the state after steps_done steps, stopped or not:
    // fdrill-train-ref recomputes it for that many steps without a network.
    if (outcome->stopped)
      std::cout << "# stopped after step " << outcome->first_step + outcome->steps_run - 1 << "\n";
    std::cout << "digest: " << DigestHex(outcome->digest) << "\n";
    std::cout << "steps_done: " << outcome->first_step + outcome->steps_run << "\n";
    std::cout << "steps_redone: " << outcome->steps_redone << "\n";
    std::cout << loaded << std::flush;
  }
  return outcome->wrong > 0 ? kExitDataCheck : kExitOk;
}

int Run(const Config& config, MpiWorld& world) {
  // The same on every rank: a bad fit fails everywhere; rank 0 says why.
  Result<std::vector<SizeStep>> plan = PlanSizes(config, world.size());
  if (!plan.ok()) {
    if (world.rank() == 0) PrintError(plan.status());
    return kExitUsage;
  }
  std::optional<TrainStart> start;
  if (config.train) {
    Result<TrainStart> started = StartTraining(config, plan->front(), world);
    if (!started.ok()) return SetupFailed(started.status());
    start = std::move(started).value();
  }

  auto backend = MakeBackend(config.backend, BackendOptionsFor(config, *plan), world);
  if (!backend.ok()) return SetupFailed(backend.status());
  auto metrics = OpenMetrics(config, world);
  if (!metrics.ok()) {
    SetupFailed(metrics.status());
    return kExitUsage;
  }
  auto loaded = LoadedLines(world, **backend);
  if (!loaded.ok()) return SetupFailed(loaded.status());
  if (start) return Train(config, plan->front(), *start, world, **backend, metrics->get(), *loaded);
  return Benchmark(config, *plan, world, **backend, metrics->get(), *loaded);
}

// The nccl_env fault's settings for ranks started on this node
// (common/host/launch_env.h), exported before anything initialises NCCL.
// Said once per process on stderr, so the job log shows the restriction.
Status ExportLaunchEnv() {
  const std::string dir = LaunchEnvDir(TmpDirFromEnv());
  auto env = ReadLaunchEnv(dir);
  if (!env.ok()) return env.status().Annotate("launch environment");
  std::string said;
  for (const auto& [name, value] : *env) {
    setenv(name.c_str(), value.c_str(), 1);
    said += " " + name + "=" + value;
  }
  if (!said.empty())
    std::cerr << ("fdrill-collective: launch environment from " + dir + ":" + said + "\n")
              << std::flush;
  return Status::Ok();
}

}  // namespace
}  // namespace fdrill

int main(int argc, char** argv) {
  using namespace fdrill;
  Result<Invocation> invocation = ParseCommandLine(std::vector<std::string>(argv, argv + argc));
  if (!invocation.ok()) {
    PrintError(invocation.status());
    std::cerr << "Run with --help for the flags." << std::endl;
    return kExitUsage;
  }
  if (invocation->print_and_exit) {
    std::cout << invocation->text;
    return kExitOk;
  }
  if (Status s = ExportLaunchEnv(); !s.ok()) {
    PrintError(s);
    return kExitUsage;
  }
  Result<std::unique_ptr<MpiWorld>> world = MpiWorld::Init(&argc, &argv);
  if (!world.ok()) {
    PrintError(world.status());
    return kExitUsage;
  }
  // After MPI_Init, so no handler the MPI library installs replaces ours.
  InstallStopSignals();
  return Run(invocation->config, **world);
}

// fdrill-collective: runs one collective over and over on every rank, timing
// each iteration, checking every element of every result, and writing one
// metrics record per iteration per rank. See README.md for flags, metrics and
// exit codes. main() owns the exit codes and the order of the phases:
// flags (no MPI yet), MPI, backend, metrics file, the loop, the summary.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "workloads/backends.h"
#include "workloads/cli.h"
#include "workloads/metrics.h"
#include "workloads/mpi_world.h"
#include "workloads/runner.h"
#include "workloads/stop.h"
#include "workloads/summary.h"

namespace fdrill {
namespace {

// One write per line, so lines of ranks sharing mpirun's stderr do not mix.
void PrintError(const Status& status) { std::cerr << ("fdrill-collective: " + status.message() + "\n") << std::flush; }

// Setup fails the same way on every rank or is agreed (AgreeAllOk), so it
// ends with a normal exit. A stuck NCCL init is a collective timeout (4);
// everything else means this backend cannot run here (2).
int SetupExitCode(const Status& status) {
  return status.code() == StatusCode::kDeadlineExceeded ? kExitCollective : kExitUsage;
}

// Opens this rank's metrics file, if any; agreed, as only some ranks may fail.
Result<std::unique_ptr<MetricsWriter>> OpenMetrics(const Config& config, World& world) {
  Status local = Status::Ok();
  std::unique_ptr<MetricsWriter> writer;
  if (!config.jsonl.empty()) {
    auto opened = MetricsWriter::Open(ExpandPathTemplate(config.jsonl, world.rank(), TmpDirFromEnv()));
    if (opened.ok()) {
      writer = std::move(opened).value();
    } else {
      local = opened.status();
    }
  }
  if (Status s = AgreeAllOk(world, local); !s.ok()) return s;
  return writer;
}

int Run(const Config& config, MpiWorld& world) {
  BackendOptions options;
  options.op = config.op;
  options.dtype = config.dtype;
  options.redop = config.redop;
  options.count = config.count();
  options.timeout = config.timeout;
  auto backend = MakeBackend(config.backend, options, world);
  if (!backend.ok()) {
    if (!IsPeerFailure(backend.status())) PrintError(backend.status());
    return SetupExitCode(backend.status());
  }
  auto metrics = OpenMetrics(config, world);
  if (!metrics.ok()) {
    if (!IsPeerFailure(metrics.status())) PrintError(metrics.status());
    return kExitUsage;
  }

  Result<RunOutcome> outcome = RunWorkload(config, world, **backend, metrics->get(), std::cerr);
  if (!outcome.ok()) {
    // A peer may be inside a collective this rank will never join: end the
    // whole job rather than hang it.
    PrintError(outcome.status());
    world.Abort(outcome.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitCollective);
  }
  if (Status s = (*backend)->Close(); !s.ok()) {
    PrintError(s);
    world.Abort(kExitCollective);
  }

  if (world.rank() == 0) {
    SummaryRow row;
    row.op = config.op;
    row.dtype = config.dtype;
    row.redop = config.redop;
    row.nranks = world.size();
    row.bytes = config.bytes;
    row.count = config.count();
    row.time_us = outcome->median_time_us;
    row.wrong = outcome->wrong;
    std::cout << FormatSummary(row) << std::flush;
    if (outcome->stopped) std::cout << "# stopped after " << outcome->iterations << " timed iterations" << std::endl;
  }
  return outcome->wrong > 0 ? kExitDataCheck : kExitOk;
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
  Result<std::unique_ptr<MpiWorld>> world = MpiWorld::Init(&argc, &argv);
  if (!world.ok()) {
    PrintError(world.status());
    return kExitUsage;
  }
  // After MPI_Init, so no handler the MPI library installs replaces ours.
  InstallStopSignals();
  return Run(invocation->config, **world);
}

#include "workloads/cli.h"

#include <CLI/CLI.hpp>

#include "harness/core/units.h"
#include "workloads/backends.h"

#ifndef FDRILL_VERSION
#error "FDRILL_VERSION is set by workloads/CMakeLists.txt"
#endif

namespace fdrill {

namespace {

// Flags as typed, before validation.
struct RawFlags {
  std::string op = "all_reduce";
  std::string dtype = "float32";
  std::string size;
  std::optional<int64_t> iters;
  std::string duration;
  int64_t warmup = 5;
  std::string backend = "mpi";
  std::string jsonl;
  std::string stop_file;
  std::string timeout = "60s";
  std::optional<int64_t> corrupt_at;
};

void AddFlags(CLI::App& app, RawFlags& f) {
  app.set_version_flag("--version", VersionString());
  app.add_option("--op", f.op, "collective: " + AcceptedOps())->capture_default_str();
  app.add_option("--dtype", f.dtype, "element type: " + AcceptedDTypes())->capture_default_str();
  app.add_option("-b,--size", f.size, "bytes per rank buffer, e.g. 4M, 64K (a whole number of elements)")->required();
  app.add_option("-n,--iters", f.iters, "timed iterations");
  app.add_option("--duration", f.duration, "stop after this long, e.g. 60s (with -n: whichever comes first)");
  app.add_option("-w,--warmup", f.warmup, "untimed iterations before the timed ones")->capture_default_str();
  app.add_option("--backend", f.backend, "mpi or nccl")->capture_default_str();
  app.add_option("--jsonl", f.jsonl, "metrics file per rank; {rank} and {tmpdir} are expanded");
  app.add_option("--stop-file", f.stop_file, "stop cleanly once this path exists");
  app.add_option("--timeout", f.timeout, "fail a collective that takes longer (nccl backend)")->capture_default_str();
  // Test-only, so hidden from --help (an empty group).
  app.add_option("--corrupt-at", f.corrupt_at, "rank 0 corrupts one output element at this iteration")->group("");
}

Result<Config> Validate(const RawFlags& f) {
  Config c;
  Result<Op> op = ParseOp(f.op);
  if (!op.ok()) return op.status();
  c.op = *op;
  Result<DType> dtype = ParseDType(f.dtype);
  if (!dtype.ok()) return dtype.status();
  c.dtype = *dtype;

  Result<uint64_t> size = ParseSizeBytes(f.size);
  if (!size.ok()) return size.status().Annotate("--size");
  const size_t element = DTypeSize(c.dtype);
  if (*size == 0 || *size % element != 0) {
    return InvalidArgument("--size " + f.size + " is " + std::to_string(*size) + " bytes: it must be a positive " +
                           "multiple of " + std::to_string(element) + " bytes (one " + f.dtype + " element)");
  }
  c.bytes = *size;

  if (f.iters) {
    if (*f.iters < 1) return InvalidArgument("-n/--iters must be at least 1, not " + std::to_string(*f.iters));
    c.iters = f.iters;
  }
  if (!f.duration.empty()) {
    Result<Duration> d = ParseDuration(f.duration);
    if (!d.ok()) return d.status().Annotate("--duration");
    if (d->count() <= 0) return InvalidArgument("--duration must be positive, not " + f.duration);
    c.duration = *d;
  }
  if (!c.iters && !c.duration) {
    return InvalidArgument("give -n/--iters N, --duration D, or both: the run must know when to stop");
  }
  if (f.warmup < 0) return InvalidArgument("-w/--warmup must be 0 or more, not " + std::to_string(f.warmup));
  c.warmup = f.warmup;

  if (Status s = CheckBackend(f.backend); !s.ok()) return s;
  c.backend = f.backend;
  Result<Duration> timeout = ParseDuration(f.timeout);
  if (!timeout.ok()) return timeout.status().Annotate("--timeout");
  if (timeout->count() <= 0) return InvalidArgument("--timeout must be positive, not " + f.timeout);
  c.timeout = *timeout;

  c.jsonl = f.jsonl;
  c.stop_file = f.stop_file;
  if (f.corrupt_at) {
    if (*f.corrupt_at < 0 || (c.iters && *f.corrupt_at >= *c.iters)) {
      return InvalidArgument("--corrupt-at " + std::to_string(*f.corrupt_at) + " is not a timed iteration");
    }
    c.corrupt_at = f.corrupt_at;
  }
  return c;
}

}  // namespace

std::string VersionString() {
  return std::string("fdrill-collective ") + FDRILL_VERSION + " (backends: " + BuiltBackendNames() + ")";
}

Result<Invocation> ParseCommandLine(const std::vector<std::string>& args) {
  CLI::App app("fdrill-collective: a collective workload with per-iteration metrics and data checks",
               "fdrill-collective");
  RawFlags flags;
  AddFlags(app, flags);

  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  Invocation invocation;
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    invocation.print_and_exit = true;
    invocation.text = app.help();
    return invocation;
  } catch (const CLI::CallForVersion& e) {
    invocation.print_and_exit = true;
    invocation.text = std::string(e.what()) + "\n";
    return invocation;
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(e.what());
  }
  Result<Config> config = Validate(flags);
  if (!config.ok()) return config.status();
  invocation.config = std::move(config).value();
  return invocation;
}

}  // namespace fdrill

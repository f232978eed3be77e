#include "workloads/cli.h"

#include <CLI/CLI.hpp>

#include "common/core/units.h"
#include "common/core/version.h"
#include "workloads/backends.h"
#include "workloads/sweep.h"

namespace fdrill {

namespace {

// Flags as typed, before validation.
struct RawFlags {
  std::string op = "all_reduce";
  std::string dtype = "float32";
  std::string redop = "sum";
  int root = 0;
  std::string size;
  std::string max_size;
  int64_t step_factor = 1;
  std::string step_bytes = "1M";
  std::optional<int64_t> iters;
  std::string duration;
  int64_t warmup = 5;
  std::string backend = "mpi";
  std::string jsonl;
  std::string stop_file;
  std::string timeout = "60s";
  std::string lineup = "barrier";
  bool train = false;
  std::optional<int64_t> steps;
  std::optional<int64_t> checkpoint_every;
  std::string checkpoint_dir;
  std::optional<int64_t> corrupt_at;
  std::optional<int64_t> die_at_step;
};

// Which flags were given at all (some are errors in some modes even with
// their default value, and defaults differ in train mode).
struct Given {
  bool dtype, redop, root, max_size, step, iters, duration, warmup, train_only;
};

void AddFlags(CLI::App& app, RawFlags& f) {
  app.set_version_flag("--version", VersionString());
  app.add_option("--op", f.op, "collective: " + AcceptedOps())->capture_default_str();
  app.add_option("--dtype", f.dtype, "element type: " + AcceptedDTypes())->capture_default_str();
  app.add_option("--redop", f.redop, "reduction (reducing ops only): " + AcceptedRedOps())
      ->capture_default_str();
  app.add_option("--root", f.root, "root rank of broadcast and reduce")->capture_default_str();
  app.add_option("-b,--size,--minbytes", f.size,
                 "message size, or the sweep's first: e.g. 4M, 64K (bytes)")
      ->required();
  app.add_option("-e,--maxbytes", f.max_size, "sweep up to this size (default: -b only)");
  app.add_option("-f,--stepfactor", f.step_factor, "sweep: multiply the size by this (1: add -i)")
      ->capture_default_str();
  app.add_option("-i,--stepbytes", f.step_bytes, "sweep: add this to the size when -f is 1")
      ->capture_default_str();
  app.add_option("-n,--iters", f.iters, "timed iterations per size");
  app.add_option("--duration", f.duration,
                 "per size: stop after this long, e.g. 60s (with -n: whichever first)");
  app.add_option("-w,--warmup", f.warmup, "untimed iterations before each size's timed ones")
      ->capture_default_str();
  app.add_option("--backend", f.backend, "mpi or nccl")->capture_default_str();
  app.add_option("--jsonl", f.jsonl,
                 "metrics file per rank; {rank}, {tmpdir} and {host} (gethostname) are expanded");
  app.add_option("--stop-file", f.stop_file, "stop cleanly once this path exists");
  app.add_option("--timeout", f.timeout, "fail a collective that takes longer (nccl backend)")
      ->capture_default_str();
  app.add_option("--lineup", f.lineup,
                 "barrier: every rank starts each timed collective together (a barrier before "
                 "it, one after); none: back to back, as a job runs them")
      ->capture_default_str();
  app.add_flag("--train", f.train,
               "training loop: all-reduce gradients into a float64 state, checkpoint, resume");
  app.add_option("--steps", f.steps, "--train: steps to run in all");
  app.add_option("--checkpoint-every", f.checkpoint_every,
                 "--train: checkpoint after every K-th step");
  app.add_option("--checkpoint-dir", f.checkpoint_dir,
                 "--train: where the checkpoint and progress files live");
  // Test-only, so hidden from --help (an empty group).
  app.add_option("--corrupt-at", f.corrupt_at,
                 "a checked rank corrupts one output element at this iteration")
      ->group("");
  app.add_option("--die-at-step", f.die_at_step, "--train: rank 1 kills itself at this step")
      ->group("");
}

Status CheckSizeUnit(uint64_t bytes, const std::string& flag, const std::string& text,
                     DType dtype) {
  const size_t element = DTypeSize(dtype);
  if (bytes == 0 || bytes % element != 0) {
    return InvalidArgument(flag + " " + text + " is " + std::to_string(bytes) +
                           " bytes: it must be a positive " + "multiple of " +
                           std::to_string(element) + " bytes (one " +
                           std::string(DTypeName(dtype)) + " element)");
  }
  return Status::Ok();
}

Result<std::vector<uint64_t>> Sizes(const RawFlags& f, DType dtype) {
  Result<uint64_t> min = ParseSizeBytes(f.size);
  if (!min.ok()) return min.status().Annotate("--size");
  if (Status s = CheckSizeUnit(*min, "--size", f.size, dtype); !s.ok()) return s;
  SweepFlags sweep;
  sweep.min_bytes = sweep.max_bytes = *min;
  if (!f.max_size.empty()) {
    Result<uint64_t> max = ParseSizeBytes(f.max_size);
    if (!max.ok()) return max.status().Annotate("-e/--maxbytes");
    sweep.max_bytes = *max;
  }
  if (f.step_factor < 1)
    return InvalidArgument("-f/--stepfactor must be at least 1, not " +
                           std::to_string(f.step_factor));
  sweep.factor = static_cast<uint64_t>(f.step_factor);
  Result<uint64_t> step = ParseSizeBytes(f.step_bytes);
  if (!step.ok()) return step.status().Annotate("-i/--stepbytes");
  sweep.step_bytes = *step;
  Result<std::vector<uint64_t>> sizes = SweepSizes(sweep);
  if (!sizes.ok()) return sizes.status();
  if (sweep.factor == 1 && sizes->size() > 1) {
    if (Status s = CheckSizeUnit(*step, "-i/--stepbytes", f.step_bytes, dtype); !s.ok()) return s;
  }
  return sizes;
}

Status ValidateTrain(const RawFlags& f, const Given& given, Config& c) {
  if (!f.train) {
    if (given.train_only) {
      return InvalidArgument(
          "--steps, --checkpoint-every, --checkpoint-dir and --die-at-step need --train");
    }
    return Status::Ok();
  }
  if (c.op != Op::kAllReduce)
    return InvalidArgument("--train all-reduces gradients: --op must be all_reduce");
  if (given.dtype && c.dtype != DType::kFloat64) {
    return InvalidArgument("--train keeps a float64 state: drop --dtype " + f.dtype +
                           " (or give float64)");
  }
  if (given.redop && c.redop != RedOp::kSum)
    return InvalidArgument("--train sums gradients: --redop must be sum");
  if (given.max_size || given.step) return InvalidArgument("--train runs one size: drop -e/-f/-i");
  if (given.iters || given.duration)
    return InvalidArgument("--train runs --steps: drop -n/--iters and --duration");
  if (given.warmup) return InvalidArgument("--train runs no warm-up: drop -w/--warmup");
  if (!f.steps || !f.checkpoint_every || f.checkpoint_dir.empty()) {
    return InvalidArgument(
        "--train needs --steps N, --checkpoint-every K and --checkpoint-dir DIR");
  }
  if (*f.steps < 1)
    return InvalidArgument("--steps must be at least 1, not " + std::to_string(*f.steps));
  if (*f.checkpoint_every < 1) {
    return InvalidArgument("--checkpoint-every must be at least 1, not " +
                           std::to_string(*f.checkpoint_every));
  }
  TrainConfig t;
  t.steps = *f.steps;
  t.checkpoint_every = *f.checkpoint_every;
  t.checkpoint_dir = f.checkpoint_dir;
  if (f.die_at_step) {
    if (*f.die_at_step < 0 || *f.die_at_step >= t.steps) {
      return InvalidArgument("--die-at-step " + std::to_string(*f.die_at_step) +
                             " is not a step (0.." + std::to_string(t.steps - 1) + ")");
    }
    t.die_at_step = f.die_at_step;
  }
  c.train = t;
  c.dtype = DType::kFloat64;
  c.warmup = 0;
  return Status::Ok();
}

Result<Config> Validate(const RawFlags& f, const Given& given) {
  Config c;
  Result<Op> op = ParseOp(f.op);
  if (!op.ok()) return op.status();
  c.op = *op;
  Result<DType> dtype = ParseDType(f.dtype);
  if (!dtype.ok()) return dtype.status();
  c.dtype = *dtype;
  Result<RedOp> redop = ParseRedOp(f.redop);
  if (!redop.ok()) return redop.status();
  c.redop = *redop;
  if (given.redop && !OpReduces(c.op)) {
    return InvalidArgument("--redop " + f.redop + ": " + f.op + " does not reduce; drop --redop");
  }
  if (given.root && !OpHasRoot(c.op)) {
    return InvalidArgument("--root: " + f.op + " has no root (broadcast and reduce have one)");
  }
  if (f.root < 0)
    return InvalidArgument("--root must be a rank (0 or more), not " + std::to_string(f.root));
  c.root = f.root;
  if (Status s = ValidateTrain(f, given, c); !s.ok()) return s;

  Result<std::vector<uint64_t>> sizes = Sizes(f, c.dtype);
  if (!sizes.ok()) return sizes.status();
  c.sizes = std::move(sizes).value();

  if (f.iters) {
    if (*f.iters < 1)
      return InvalidArgument("-n/--iters must be at least 1, not " + std::to_string(*f.iters));
    c.iters = f.iters;
  }
  if (!f.duration.empty()) {
    Result<Duration> d = ParseDuration(f.duration);
    if (!d.ok()) return d.status().Annotate("--duration");
    if (d->count() <= 0) return InvalidArgument("--duration must be positive, not " + f.duration);
    c.duration = *d;
  }
  if (!c.train && !c.iters && !c.duration) {
    return InvalidArgument(
        "give -n/--iters N, --duration D, or both: the run must know when to stop");
  }
  if (!c.train) {
    if (f.warmup < 0)
      return InvalidArgument("-w/--warmup must be 0 or more, not " + std::to_string(f.warmup));
    c.warmup = f.warmup;
  }

  if (Status s = CheckBackend(f.backend); !s.ok()) return s;
  c.backend = f.backend;
  Result<Duration> timeout = ParseDuration(f.timeout);
  if (!timeout.ok()) return timeout.status().Annotate("--timeout");
  if (timeout->count() <= 0) return InvalidArgument("--timeout must be positive, not " + f.timeout);
  c.timeout = *timeout;

  if (f.lineup == "none") {
    c.lineup = Config::LineUp::kNone;
  } else if (f.lineup != "barrier") {
    return InvalidArgument("--lineup " + f.lineup + ": barrier or none");
  }
  c.jsonl = f.jsonl;
  c.stop_file = f.stop_file;
  if (f.corrupt_at) {
    const std::optional<int64_t> last =
        c.train ? std::optional<int64_t>(c.train->steps)
                : (c.iters ? std::optional<int64_t>(*c.iters * static_cast<int64_t>(c.sizes.size()))
                           : std::nullopt);
    if (*f.corrupt_at < 0 || (last && *f.corrupt_at >= *last)) {
      return InvalidArgument("--corrupt-at " + std::to_string(*f.corrupt_at) +
                             " is not a timed iteration");
    }
    c.corrupt_at = f.corrupt_at;
  }
  return c;
}

}  // namespace

std::string VersionString() {
  return std::string("fdrill-collective ") + kFdrillVersion + " (backends: " + BuiltBackendNames() +
         ")";
}

Result<Invocation> ParseCommandLine(const std::vector<std::string>& args) {
  CLI::App app(
      "fdrill-collective: a collective workload with per-iteration metrics and data checks",
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
  Given given{};
  given.dtype = app.count("--dtype") > 0;
  given.redop = app.count("--redop") > 0;
  given.root = app.count("--root") > 0;
  given.max_size = app.count("-e") > 0;
  given.step = app.count("-f") > 0 || app.count("-i") > 0;
  given.iters = app.count("-n") > 0;
  given.duration = app.count("--duration") > 0;
  given.warmup = app.count("-w") > 0;
  given.train_only = app.count("--steps") + app.count("--checkpoint-every") +
                         app.count("--checkpoint-dir") + app.count("--die-at-step") >
                     0;
  Result<Config> config = Validate(flags, given);
  if (!config.ok()) return config.status();
  invocation.config = std::move(config).value();
  return invocation;
}

}  // namespace fdrill

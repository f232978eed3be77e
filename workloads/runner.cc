#include "workloads/runner.h"

#include <time.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "workloads/pattern.h"
#include "workloads/stop.h"
#include "workloads/summary.h"

namespace fdrill {

namespace {

// Agreement values; the MAX over ranks wins.
constexpr int64_t kGoOn = 0;
constexpr int64_t kEndSize = 1;
constexpr int64_t kStopRun = 2;

// The timed loop's agreement carries two values in one int64: the code
// above, times kCodeUnit, plus rank 0's gap (how many line-ups come before
// the next agreement; the other ranks add 0). The MAX is the
// highest code, with rank 0's gap whenever its code is that high — and when
// another rank's is higher, the run stops and the gap does not matter.
constexpr int64_t kCodeUnit = int64_t{1} << 32;
// At most this many line-ups between agreements: a stop waits for at most
// this many iterations after the gap was chosen, however much slower they
// became since (a fault landing mid-gap).
constexpr int64_t kMaxGap = 63;

int64_t ClockNanos(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// One rank's loop over the plan; the shared state of its sizes.
class Loop {
 public:
  Loop(const Config& config, World& world, Backend& backend, MetricsWriter* metrics,
       std::ostream& err, uint64_t max_send_bytes, uint64_t max_recv_bytes)
      : config_(config),
        world_(world),
        backend_(backend),
        metrics_(metrics),
        err_(err),
        pattern_(config.op, config.dtype, config.redop, world.size(), config.root),
        stop_file_(config.stop_file, config.agree_every.count()),
        input_(max_send_bytes),
        output_(max_recv_bytes) {
    record_.rank = world.rank();
    record_.nranks = world.size();
    record_.host = HostName();
    record_.op = OpName(config.op);
    record_.dtype = DTypeName(config.dtype);
    record_.redop = RedOpLabel(config.op, config.redop);
  }

  // Runs the untimed warm-up of one size; true when the run is to stop.
  Result<bool> WarmUp(const SizeStep& step) {
    const size_t element = DTypeSize(config_.dtype);
    auto input = std::span(input_).first(step.layout.send_count * element);
    if (Status s = FillInput(0, step.layout, input); !s.ok()) return s;
    for (int64_t w = 0; w < config_.warmup; ++w) {
      if (Status s = RunOnce("warm-up ", w); !s.ok()) return s;
      const bool local =
          StopRequested() || (world_.rank() == 0 && StopFileExists(config_.stop_file));
      Result<int64_t> agreed = world_.MaxInt64(local ? kStopRun : kGoOn);
      if (!agreed.ok()) return agreed.status().Annotate("stop agreement");
      if (*agreed >= kStopRun) return true;
    }
    return false;
  }

  // Runs one size's timed iterations into `out`; true when the run is to
  // stop. However the size ends, its records are in the file before the
  // next size's warm-up (or the summary) begins.
  Result<bool> Timed(const SizeStep& step, SizeOutcome* out, std::vector<double>* times_us) {
    Result<bool> stop = TimedIterations(step, out, times_us);
    if (metrics_ == nullptr) return stop;
    Status flushed = metrics_->Flush();
    if (stop.ok() && !flushed.ok()) return flushed;
    return stop;
  }

 private:
  Result<bool> TimedIterations(const SizeStep& step, SizeOutcome* out,
                               std::vector<double>* times_us) {
    const size_t element = DTypeSize(config_.dtype);
    const Layout& layout = step.layout;
    auto input = std::span(input_).first(layout.send_count * element);
    auto output = std::span(output_).first(layout.recv_count * element);
    record_.bytes = step.bytes;
    record_.count = layout.count;
    const double bus_factor = BusFactor(config_.op, world_.size());
    const int rank = world_.rank();
    const int64_t start_ns = ClockNanos(CLOCK_MONOTONIC);
    int64_t last_end_ns = start_ns;
    int64_t barriers_left = 0;  // line-ups before the next agreement
    const bool lined_up = config_.lineup == Config::LineUp::kBarrier;
    if (config_.iters) times_us->reserve(static_cast<size_t>(*config_.iters));
    for (;;) {
      if (config_.iters && out->iterations >= *config_.iters) return false;
      const int64_t iter = next_iter_;
      if (Status s = FillInput(iter, layout, input); !s.ok()) return s;
      // The line-up: every rank waits for the others before the timed
      // collective, so the collective's time is the collective's, not a
      // peer's check (a straggler shows in the others' wait instead). It
      // is a barrier, as a latency benchmark's is: a collective led by an
      // all-reduce ran up to 8 % slower (bench/collective_fidelity.sh).
      // --lineup none leaves it out, and the settle below: the collectives
      // then run back to back, as a job's do. Before it, every agree_every
      // (at this size's pace), the agreement.
      const int64_t wait_begin_ns = ClockNanos(CLOCK_MONOTONIC);
      if (barriers_left > 0) {
        --barriers_left;
      } else {
        int64_t local = StopRequested() ? kStopRun : kGoOn;
        int64_t gap = 0;
        if (rank == 0) {
          if (stop_file_.Seen(last_end_ns)) local = kStopRun;
          if (config_.duration && last_end_ns - start_ns >= config_.duration->count()) {
            local = std::max(local, kEndSize);
          }
          gap = GapUntilNextAgreement(start_ns, last_end_ns, out->iterations);
        }
        Result<int64_t> agreed = world_.MaxInt64(local * kCodeUnit + gap);
        if (!agreed.ok()) return agreed.status().Annotate("stop agreement");
        const int64_t code = *agreed / kCodeUnit;
        if (code >= kStopRun) return true;
        if (code == kEndSize) return false;
        barriers_left = *agreed % kCodeUnit;
      }
      if (lined_up) {
        if (Status s = world_.Barrier(); !s.ok()) return s.Annotate("line-up");
      }
      ++next_iter_;
      const int64_t begin_ns = ClockNanos(CLOCK_MONOTONIC);
      if (Status s = RunOnce("iter ", iter); !s.ok()) return s;
      const int64_t end_ns = ClockNanos(CLOCK_MONOTONIC);
      // The settle (untimed): every rank waits until all have left the
      // collective before its check and record, so that no rank works on a
      // core a peer still needs to finish its timed collective (4 ranks on
      // 2 cores: +3 % at 8 B, +3-8 % at 512 KiB-8 MiB without it,
      // bench/collective_fidelity.sh), and no line-up message reaches a
      // peer still inside it. Its wait is in wait_ms with the line-up's: a
      // rank stopped before it arrives there holds its peers up here.
      if (lined_up) {
        if (Status s = world_.Barrier(); !s.ok()) return s.Annotate("settle");
      }
      // The record's clocks are read here, when the iteration is over: its
      // interval (mono_ns back by time_ms + wait_ms) then holds the settle's
      // wait. Stamped at the collective's end, a link that went down while
      // the ranks settled read as a wait before the fault (a 13 s leaf-down
      // once measured as a 3 s stall).
      const int64_t settled_ns = ClockNanos(CLOCK_MONOTONIC);
      const int64_t wall_ns = ClockNanos(CLOCK_REALTIME);
      // In place where the backend allows it (the test hook's corruption
      // then lands in the receive buffer itself, overwritten next iteration).
      std::span<std::byte> result = output;
      if (std::span<std::byte> host = backend_.HostOutput(); !host.empty()) {
        result = host;
      } else if (Status s = backend_.GetOutput(output); !s.ok()) {
        return s;
      }

      if (config_.corrupt_at == iter && rank == CorruptingRank(config_)) {
        CorruptOneElement(config_.dtype, layout.recv_count, result);
      }
      CheckResult check = pattern_.Check(rank, iter, layout, result);
      if (check.wrong > 0) {
        // One write per line: ranks share mpirun's stderr.
        err_ << ("fdrill-collective: " + DescribeFailure(rank, iter, check) + "\n") << std::flush;
        out->wrong += check.wrong;
      }

      const double time_ns = static_cast<double>(end_ns - begin_ns);
      times_us->push_back(time_ns / 1e3);
      ++out->iterations;
      if (metrics_ != nullptr) {
        record_.Stamp(iter, wall_ns, settled_ns, time_ns, bus_factor, check.wrong);
        record_.wait_ms = static_cast<double>(begin_ns - wait_begin_ns + settled_ns - end_ns) / 1e6;
        if (Status s = metrics_->Append(record_); !s.ok()) return s;
      }
      last_end_ns = end_ns;
    }
  }

  // Rank 0's gap: as many iterations as fit, at this size's pace so far
  // (`done` iterations from `start_ns` to `now_ns`, line-ups and checks
  // included), in agree_every and in what is left of --duration, less the
  // one that agrees; 0 before the first (no pace yet), at most kMaxGap.
  int64_t GapUntilNextAgreement(int64_t start_ns, int64_t now_ns, int64_t done) const {
    if (done == 0) return 0;
    const int64_t pace_ns = std::max<int64_t>(1, (now_ns - start_ns) / done);
    int64_t window_ns = config_.agree_every.count();
    if (config_.duration) {
      window_ns = std::min(window_ns, start_ns + config_.duration->count() - now_ns);
    }
    return std::clamp<int64_t>(window_ns / pace_ns - 1, 0, kMaxGap);
  }

  // The input of iteration `iter`, written into the backend's own send
  // buffer when it is host memory (no copy to perturb the run), else copied.
  Status FillInput(int64_t iter, const Layout& layout, std::span<std::byte> scratch) {
    if (std::span<std::byte> host = backend_.HostInput(); !host.empty()) {
      pattern_.Fill(world_.rank(), iter, layout, host);
      return Status::Ok();
    }
    pattern_.Fill(world_.rank(), iter, layout, scratch);
    return backend_.SetInput(scratch);
  }

  // Runs the collective and annotates a failure with where it happened
  // ("iter 17"): the text is made only then, never in the timed region.
  Status RunOnce(const char* what, int64_t n) {
    Status s = backend_.Run();
    if (!s.ok())
      return s.Annotate("rank " + std::to_string(world_.rank()) + " " + what + std::to_string(n));
    return s;
  }

  const Config& config_;
  World& world_;
  Backend& backend_;
  MetricsWriter* metrics_;
  std::ostream& err_;
  DataPattern pattern_;
  StopFileWatch stop_file_;
  std::vector<std::byte> input_;
  std::vector<std::byte> output_;
  IterationRecord record_;
  int64_t next_iter_ = 0;
};

}  // namespace

Result<TimeStats> AverageOverRanks(World& world, const TimeStats& mine) {
  TimeStats all;
  for (auto [from, to] :
       {std::pair{&TimeStats::mean_us, &all.mean_us}, std::pair{&TimeStats::p50_us, &all.p50_us},
        std::pair{&TimeStats::p99_us, &all.p99_us}}) {
    Result<double> sum = world.SumDouble(mine.*from);
    if (!sum.ok()) return sum.status();
    *to = *sum / world.size();
  }
  return all;
}

int CorruptingRank(const Config& config) { return config.op == Op::kReduce ? config.root : 0; }

void CorruptOneElement(DType dtype, uint64_t recv_count, std::span<std::byte> output) {
  const size_t element = DTypeSize(dtype);
  const uint64_t index = recv_count / 2;
  if (recv_count == 0 || (index + 1) * element > output.size()) return;
  std::memset(output.data() + index * element, 0, element);
}

Result<RunOutcome> RunWorkload(const Config& config, const std::vector<SizeStep>& plan,
                               World& world, Backend& backend, MetricsWriter* metrics,
                               std::ostream& err) {
  if (plan.empty()) return InvalidArgument("no message size to run");
  Loop loop(config, world, backend, metrics, err, MaxSendBytes(plan, config.dtype),
            MaxRecvBytes(plan, config.dtype));
  RunOutcome outcome;
  std::vector<TimeStats> stats;
  for (const SizeStep& step : plan) {
    if (Status s = backend.SetLayout(step.layout); !s.ok()) return s;
    Result<bool> stop = loop.WarmUp(step);
    if (!stop.ok()) return stop.status();
    if (*stop) {
      outcome.stopped = true;
      break;
    }
    SizeOutcome size{step.bytes, step.layout, 0, 0, 0};
    std::vector<double> times_us;
    stop = loop.Timed(step, &size, &times_us);
    if (!stop.ok()) return stop.status();
    outcome.iterations += size.iterations;
    outcome.sizes.push_back(size);
    stats.push_back(Summarise(std::move(times_us)));
    if (*stop) {
      outcome.stopped = true;
      break;
    }
  }

  // Totals over ranks, after the last timed collective.
  for (size_t k = 0; k < outcome.sizes.size(); ++k) {
    SizeOutcome& size = outcome.sizes[k];
    Result<int64_t> total_wrong = world.SumInt64(static_cast<int64_t>(size.wrong));
    if (!total_wrong.ok()) return total_wrong.status().Annotate("summary");
    Result<TimeStats> time = AverageOverRanks(world, stats[k]);
    if (!time.ok()) return time.status().Annotate("summary");
    size.wrong = static_cast<uint64_t>(*total_wrong);
    size.time = *time;
    outcome.wrong += size.wrong;
  }
  return outcome;
}

}  // namespace fdrill

#include "workloads/runner.h"

#include <time.h>

#include <span>
#include <string>
#include <vector>

#include "workloads/pattern.h"
#include "workloads/stop.h"
#include "workloads/summary.h"

namespace fdrill {

namespace {

int64_t ClockNanos(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The one place the flags of every rank meet: 1 on any rank stops all.
Result<bool> AgreeToStop(World& world, bool local) {
  Result<int64_t> any = world.MaxInt64(local ? 1 : 0);
  if (!any.ok()) return any.status().Annotate("stop agreement");
  return *any != 0;
}

// Runs the collective and annotates a failure with where it happened.
Status RunOnce(Backend& backend, int rank, const std::string& where) {
  Status s = backend.Run();
  if (!s.ok()) return s.Annotate("rank " + std::to_string(rank) + " " + where);
  return s;
}

}  // namespace

Result<RunOutcome> RunWorkload(const Config& config, World& world, Backend& backend, MetricsWriter* metrics,
                               std::ostream& err) {
  const int rank = world.rank();
  const int nranks = world.size();
  if (nranks > kMaxExactRanks) {
    return InvalidArgument("the data check is exact up to " + std::to_string(kMaxExactRanks) + " ranks, not " +
                           std::to_string(nranks));
  }
  const uint64_t count = config.count();
  std::vector<float> input(count);
  std::vector<float> output(count);
  const auto input_bytes = std::as_bytes(std::span(input));
  const auto output_bytes = std::as_writable_bytes(std::span(output));

  RunOutcome outcome;
  FillInput(rank, 0, input);
  if (Status s = backend.SetInput(input_bytes); !s.ok()) return s;
  for (int64_t w = 0; w < config.warmup; ++w) {
    if (Status s = RunOnce(backend, rank, "warm-up " + std::to_string(w)); !s.ok()) return s;
    bool local_stop = StopRequested() || (rank == 0 && StopFileExists(config.stop_file));
    Result<bool> stop = AgreeToStop(world, local_stop);
    if (!stop.ok()) return stop.status();
    if (*stop) {
      outcome.stopped = true;
      return outcome;
    }
  }

  IterationRecord record;
  record.rank = rank;
  record.nranks = nranks;
  record.host = HostName();
  record.op = OpName(config.op);
  record.dtype = DTypeName(config.dtype);
  record.redop = RedOpName(config.redop);
  record.bytes = config.bytes;
  record.count = count;
  const double bus_factor = BusFactor(config.op, nranks);

  std::vector<double> times_us;
  uint64_t wrong = 0;
  const int64_t start_ns = ClockNanos(CLOCK_MONOTONIC);
  bool agreement_pending = false;
  for (int64_t iter = 0;; ++iter) {
    FillInput(rank, iter, input);
    if (Status s = backend.SetInput(input_bytes); !s.ok()) return s;
    const int64_t begin_ns = ClockNanos(CLOCK_MONOTONIC);
    if (Status s = RunOnce(backend, rank, "iter " + std::to_string(iter)); !s.ok()) return s;
    const int64_t end_ns = ClockNanos(CLOCK_MONOTONIC);
    const int64_t wall_ns = ClockNanos(CLOCK_REALTIME);
    if (Status s = backend.GetOutput(output_bytes); !s.ok()) return s;

    if (rank == 0 && config.corrupt_at == iter && count > 0) output[count / 2] += 1.0f;
    CheckResult check = CheckAllReduceSum(nranks, iter, output);
    if (check.wrong > 0) {
      // One write per line: ranks share mpirun's stderr.
      err << ("fdrill-collective: " + DescribeFailure(rank, iter, count, check) + "\n") << std::flush;
      wrong += check.wrong;
    }

    const double time_ns = static_cast<double>(end_ns - begin_ns);
    times_us.push_back(time_ns / 1e3);
    ++outcome.iterations;
    if (metrics != nullptr) {
      record.iter = iter;
      record.wall_ns = wall_ns;
      record.mono_ns = end_ns;
      record.time_ms = time_ns / 1e6;
      record.algbw_gbps = AlgBandwidthGbps(config.bytes, time_ns);
      record.busbw_gbps = record.algbw_gbps * bus_factor;
      record.wrong = check.wrong;
      if (Status s = metrics->Append(record); !s.ok()) return s;
    }

    // Rank 0's stop decision travels in a split-phase agreement that
    // completes during the next timed collective (World::StartMaxInt64), so
    // every network wait is inside a timed collective.
    if (agreement_pending) {
      Result<int64_t> any = world.FinishMaxInt64();
      agreement_pending = false;
      if (!any.ok()) return any.status().Annotate("stop agreement");
      if (*any != 0) {
        outcome.stopped = true;
        break;
      }
    }
    if (config.iters && iter + 1 >= *config.iters) break;
    bool local_stop = StopRequested();
    if (rank == 0) {
      local_stop = local_stop || StopFileExists(config.stop_file) ||
                   (config.duration && end_ns - start_ns >= config.duration->count());
    }
    if (Status s = world.StartMaxInt64(local_stop ? 1 : 0); !s.ok()) return s.Annotate("stop agreement");
    agreement_pending = true;
  }
  if (agreement_pending) {
    // Every rank left the loop at the same iteration (the -n limit) with
    // one agreement in flight: complete it so no request is left behind.
    if (Result<int64_t> any = world.FinishMaxInt64(); !any.ok()) return any.status().Annotate("stop agreement");
  }

  Result<int64_t> total_wrong = world.SumInt64(static_cast<int64_t>(wrong));
  if (!total_wrong.ok()) return total_wrong.status().Annotate("summary");
  Result<double> sum_median = world.SumDouble(Median(std::move(times_us)));
  if (!sum_median.ok()) return sum_median.status().Annotate("summary");
  outcome.wrong = static_cast<uint64_t>(*total_wrong);
  outcome.median_time_us = *sum_median / nranks;
  return outcome;
}

}  // namespace fdrill

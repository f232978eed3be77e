#include "workloads/train.h"

#include <signal.h>
#include <time.h>

#include <cstring>
#include <span>
#include <string>

#include "workloads/pattern.h"
#include "workloads/runner.h"
#include "workloads/stop.h"
#include "workloads/summary.h"

namespace fdrill {

namespace {

int64_t ClockNanos(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Rank 0's part of StartTraining: fills `start` from the directory.
Status LoadOnRankZero(const Config& config, uint64_t count, int nranks, TrainStart& start) {
  const std::string& dir = config.train->checkpoint_dir;
  if (Status s = PrepareCheckpointDir(dir); !s.ok()) return s;
  Result<std::unique_ptr<ProgressFile>> progress = ProgressFile::Open(dir);
  if (!progress.ok()) return progress.status();
  start.progress = std::move(progress).value();
  Result<std::optional<Checkpoint>> checkpoint = ReadCheckpoint(dir);
  if (!checkpoint.ok()) return checkpoint.status();
  start.restarted = start.progress->progress().completed > 0;
  if (!checkpoint->has_value()) return Status::Ok();
  const Checkpoint& c = **checkpoint;
  const std::string where =
      "--checkpoint-dir " + dir + ": the checkpoint at step " + std::to_string(c.step);
  if (c.nranks != nranks) {
    return InvalidArgument(where + " was written by " + std::to_string(c.nranks) + " ranks, not " +
                           std::to_string(nranks) + " (the gradients depend on the rank count)");
  }
  if (c.state.size() != count) {
    return InvalidArgument(where + " holds " + std::to_string(c.state.size()) + " elements, not " +
                           std::to_string(count) + " (-b " +
                           std::to_string(count * sizeof(double)) + ")");
  }
  if (c.step > config.train->steps) {
    return InvalidArgument(where + " is past --steps " + std::to_string(config.train->steps));
  }
  start.step = c.step;
  start.state = c.state;
  start.restarted = true;
  return Status::Ok();
}

}  // namespace

int DyingRank(int nranks) { return nranks > 1 ? 1 : 0; }

Result<TrainStart> StartTraining(const Config& config, const SizeStep& size, World& world) {
  if (!config.train) return Internal("StartTraining without --train");
  const uint64_t count = size.layout.count;
  TrainStart start;
  start.state.assign(count, kTrainInitialState);
  Status local =
      world.rank() == 0 ? LoadOnRankZero(config, count, world.size(), start) : Status::Ok();
  if (Status s = AgreeAllOk(world, local); !s.ok()) return s;
  int64_t header[2] = {start.step, start.restarted ? 1 : 0};
  if (Status s = world.Broadcast(std::as_writable_bytes(std::span(header)), 0); !s.ok()) return s;
  if (Status s = world.Broadcast(std::as_writable_bytes(std::span(start.state)), 0); !s.ok())
    return s;
  start.step = header[0];
  start.restarted = header[1] != 0;
  return start;
}

Result<TrainOutcome> RunTraining(const Config& config, const SizeStep& size, TrainStart& start,
                                 World& world, Backend& backend, MetricsWriter* metrics,
                                 std::ostream& err) {
  const TrainConfig& train = *config.train;
  const int rank = world.rank();
  const Layout& layout = size.layout;
  const DataPattern pattern(Op::kAllReduce, DType::kFloat64, RedOp::kSum, world.size(), 0);
  std::vector<double> gradient(layout.send_count);
  std::vector<double> sum(layout.recv_count);
  const auto gradient_bytes = std::as_writable_bytes(std::span(gradient));
  const auto sum_bytes = std::as_writable_bytes(std::span(sum));
  if (Status s = backend.SetLayout(layout); !s.ok()) return s;

  IterationRecord record;
  record.rank = rank;
  record.nranks = world.size();
  record.host = HostName();
  record.op = OpName(Op::kAllReduce);
  record.dtype = DTypeName(DType::kFloat64);
  record.redop = RedOpName(RedOp::kSum);
  record.bytes = size.bytes;
  record.count = layout.count;
  record.restarted = start.restarted;
  const double bus_factor = BusFactor(Op::kAllReduce, world.size());

  TrainOutcome outcome;
  outcome.first_step = start.step;
  std::vector<double> times_us;
  uint64_t wrong = 0;
  bool pending = false;
  for (int64_t step = start.step; step < train.steps; ++step) {
    if (train.die_at_step == step) {
      // Test hook. The blocking agreement first makes sure rank 0 has
      // recorded step - 1, so the count of redone steps is deterministic.
      if (Result<int64_t> r = world.MaxInt64(0); !r.ok()) return r.status();
      if (rank == DyingRank(world.size())) raise(SIGKILL);
    }
    pattern.Fill(rank, step, layout, gradient_bytes);
    if (Status s = backend.SetInput(gradient_bytes); !s.ok()) return s;
    const int64_t begin_ns = ClockNanos(CLOCK_MONOTONIC);
    if (Status s = backend.Run(); !s.ok())
      return s.Annotate("rank " + std::to_string(rank) + " step " + std::to_string(step));
    const int64_t end_ns = ClockNanos(CLOCK_MONOTONIC);
    const int64_t wall_ns = ClockNanos(CLOCK_REALTIME);
    if (Status s = backend.GetOutput(sum_bytes); !s.ok()) return s;
    if (config.corrupt_at == step && rank == 0)
      CorruptOneElement(DType::kFloat64, layout.recv_count, sum_bytes);
    const CheckResult check = pattern.Check(rank, step, layout, sum_bytes);
    if (check.wrong > 0) {
      err << ("fdrill-collective: " + DescribeFailure(rank, step, check) + "\n") << std::flush;
      wrong += check.wrong;
    }
    for (size_t j = 0; j < start.state.size(); ++j)
      start.state[j] = TrainUpdate(start.state[j], sum[j]);

    if (rank == 0) {
      if ((step + 1) % train.checkpoint_every == 0) {
        Checkpoint c{step + 1, world.size(), start.state};
        if (Status s = WriteCheckpoint(train.checkpoint_dir, c); !s.ok()) return s;
      }
      if (Status s = start.progress->StepCompleted(step); !s.ok()) return s;
    }
    const double time_ns = static_cast<double>(end_ns - begin_ns);
    times_us.push_back(time_ns / 1e3);
    ++outcome.steps_run;
    if (metrics != nullptr) {
      record.step = step;
      record.Stamp(step, wall_ns, end_ns, time_ns, bus_factor, check.wrong);
      if (Status s = metrics->Append(record); !s.ok()) return s;
      // Every step's record reaches the file before the next step: a
      // training run is killed on purpose (die_at_step, process faults) and
      // its reports count the steps each attempt recorded.
      if (Status s = metrics->Flush(); !s.ok()) return s;
    }

    if (pending) {
      Result<int64_t> agreed = world.FinishMaxInt64();
      pending = false;
      if (!agreed.ok()) return agreed.status().Annotate("stop agreement");
      if (*agreed != 0) {
        outcome.stopped = step + 1 < train.steps;
        break;
      }
    }
    if (step + 1 >= train.steps) break;
    const bool local = StopRequested() || (rank == 0 && StopFileExists(config.stop_file));
    if (Status s = world.StartMaxInt64(local ? 1 : 0); !s.ok()) return s.Annotate("stop agreement");
    pending = true;
  }

  outcome.digest = StateDigest(start.state);
  if (rank == 0) outcome.steps_redone = start.progress->progress().redone;
  Result<int64_t> total_wrong = world.SumInt64(static_cast<int64_t>(wrong));
  if (!total_wrong.ok()) return total_wrong.status().Annotate("summary");
  Result<TimeStats> time = AverageOverRanks(world, Summarise(std::move(times_us)));
  if (!time.ok()) return time.status().Annotate("summary");
  outcome.wrong = static_cast<uint64_t>(*total_wrong);
  outcome.time = *time;
  return outcome;
}

}  // namespace fdrill

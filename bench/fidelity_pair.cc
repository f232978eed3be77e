// bench/collective_fidelity.sh's program (issue 25): in ONE MPI job, size by
// size, alternating, ROUNDS blocks each, (a) a plain MPI latency loop — an untimed
// MPI_Barrier, then MPI_Allreduce of float32 sums on MPI_COMM_WORLD timed
// with MPI_Wtime, nothing else, as OSU's osu_allreduce times it — and (b)
// fdrill-collective's own loop (workloads/runner.h: RunWorkload with the MPI
// world and backend, writing its metrics records and watching a stop file,
// as a drill runs it), both over 8 B..8 MiB (x4), each block ITERS timed
// iterations after 5 warm-ups. The order turns round every other round
// (plain first, then fdrill first).
//
// Why one job: a new MPI job on the 2-core emulated fabric lands in a state
// of its own (which connections, which pages, which core handles which
// veth's softirq) that moved one job's medians against another's by up to
// 10 %, job after job, for the same program, and within a job, at 128-512
// KiB, by 30 % from one second to the next. Alternating blocks of one size
// inside one job compares the two loops under the same state.
//
//   mpirun ... fidelity_pair ROUNDS ITERS DIR [FIRST_ROUND]
// (its rounds numbered from FIRST_ROUND, 1 unless given: the script runs
// several jobs and pools their rounds). Rank 0 prints one line per round and size of the plain
// loop:
//   minimal <bytes> <median_us> <mean_us> <round>
// where median (mean) = the mean over ranks of each rank's median (mean)
// iteration time. fdrill's records of round k are DIR/round<k>/r<rank>.jsonl
// (the script reads the same figures from their time_ms); DIR/stop is the
// stop file (never created).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "workloads/backends.h"
#include "workloads/cli.h"
#include "workloads/metrics.h"
#include "workloads/mpi_world.h"
#include "workloads/plan.h"
#include "workloads/runner.h"

namespace fdrill {
namespace {

constexpr long kMaxBytes = 8L << 20;
constexpr int kWarmup = 5;

// FIDELITY_PLAIN_WORK (an experiment, not the baseline): the plain loop
// also does, untimed after each iteration, pieces of what fdrill's loop does
// there — "settle" (a barrier), "check" (the output compared), "fill" (the
// next input written), "record" (a record formatted, not written); a
// comma-separated list of them, or 1 for all four. If fdrill's small-size
// bias is that work's side effects (caches, the settle's messages), the
// plain loop then shows it too, and the pieces say which.
struct PlainWork {
  bool settle = false, check = false, fill = false, record = false;
  bool any() const { return settle || check || fill || record; }
};

PlainWork PlainDoesFdrillsWork() {
  PlainWork work;
  const char* v = std::getenv("FIDELITY_PLAIN_WORK");
  if (v == nullptr) return work;
  const std::string list = std::string(",") + v + ",";
  const bool all = list == ",1,";
  work.settle = all || list.find(",settle,") != std::string::npos;
  work.check = all || list.find(",check,") != std::string::npos;
  work.fill = all || list.find(",fill,") != std::string::npos;
  work.record = all || list.find(",record,") != std::string::npos;
  return work;
}

// The untimed work above, at `count` floats: returns something the
// compiler cannot drop.
size_t FdrillsWorkBetweenIterations(const PlainWork& work, int iter, int count, std::span<float> in,
                                    std::span<const float> out, std::vector<float>& expected) {
  size_t sink = 0;
  if (work.settle) MPI_Barrier(MPI_COMM_WORLD);
  if (work.check)
    sink += std::memcmp(out.data(), expected.data(), static_cast<size_t>(count) * 4) != 0;
  if (work.fill)
    for (int j = 0; j < count; ++j) in[static_cast<size_t>(j)] = static_cast<float>((iter + j) % 7);
  if (work.record) {
    char record[256];
    char* p = record;
    for (double v : {static_cast<double>(iter), 1.5 * iter, 0.25 * count, 3.0}) {
      p = std::to_chars(p, record + sizeof record, v).ptr;
      *p++ = ',';
    }
    sink += static_cast<size_t>(p - record);
  }
  return sink;
}

// (a): the plain loop's block of `iters` at one size, on MPI_COMM_WORLD.
void PlainBlock(long bytes, int round, int iters, std::span<float> in, std::span<float> out) {
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  std::vector<double> t(static_cast<size_t>(iters));
  const int count = static_cast<int>(bytes / 4);
  for (int w = 0; w < kWarmup; ++w)
    MPI_Allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double sum = 0;
  const PlainWork work = PlainDoesFdrillsWork();
  std::vector<float> expected(work.check ? static_cast<size_t>(count) : 0);
  size_t sink = 0;
  for (int i = 0; i < iters; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double s = MPI_Wtime();
    MPI_Allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    t[static_cast<size_t>(i)] = (MPI_Wtime() - s) * 1e6;
    sum += t[static_cast<size_t>(i)];
    if (work.any()) sink += FdrillsWorkBetweenIterations(work, i, count, in, out, expected);
  }
  if (work.any() && sink == SIZE_MAX) std::printf("%zu\n", sink);  // keeps the work
  std::sort(t.begin(), t.end());
  const size_t half = static_cast<size_t>(iters / 2);
  const double median = iters % 2 ? t[half] : (t[half - 1] + t[half]) / 2;
  double stats[2] = {median, sum / iters};
  double total[2] = {0, 0};
  MPI_Reduce(stats, total, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("minimal %ld %.2f %.2f %d\n", bytes, total[0] / n, total[1] / n, round);
    std::fflush(stdout);
  }
}

int Main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: fidelity_pair ROUNDS ITERS DIR [FIRST_ROUND] (under mpirun)\n";
    return 2;
  }
  const int first = argc == 5 ? std::atoi(argv[4]) : 1;
  const int rounds = std::atoi(argv[1]);
  const std::string iters = argv[2];
  const std::string dir = argv[3];
  Result<Invocation> invocation =
      ParseCommandLine({"fdrill-collective", "-b", "8", "-e", "8M", "-f", "4", "-n", iters, "-w",
                        std::to_string(kWarmup), "--stop-file", dir + "/stop"});
  if (!invocation.ok()) {
    std::cerr << "fidelity_pair: " << invocation.status().message() << "\n";
    return 2;
  }
  Config config = invocation->config;
  Result<std::unique_ptr<MpiWorld>> world = MpiWorld::Init(&argc, &argv);
  if (!world.ok()) {
    std::cerr << "fidelity_pair: " << world.status().message() << "\n";
    return 2;
  }
  MpiWorld& w = **world;
  Result<std::vector<SizeStep>> plan = PlanSizes(config, w.size());
  if (!plan.ok()) {
    std::cerr << "fidelity_pair: " << plan.status().message() << "\n";
    return 2;
  }
  // FIDELITY_MAX_BYTES (experiments): the largest size run, all up to 8M
  // unless set (e.g. 2048 for the latency-bound sizes only, a run of
  // seconds). The backend's buffers are still the whole plan's, as
  // fdrill-collective's are, unless FIDELITY_BACKEND_PLAN=run sizes them
  // for the sizes run.
  const char* max_env = std::getenv("FIDELITY_MAX_BYTES");
  uint64_t max_bytes = kMaxBytes;
  if (max_env != nullptr) {
    const char* end = max_env + std::strlen(max_env);
    if (std::from_chars(max_env, end, max_bytes).ptr != end || max_bytes < 8) {
      std::cerr << "fidelity_pair: MAX_BYTES=" << max_env
                << ": a number of bytes from 8 up (2048, not 2K)\n";
      return 2;
    }
  }
  std::vector<SizeStep> run_plan;
  for (const SizeStep& step : *plan)
    if (step.bytes <= max_bytes) run_plan.push_back(step);
  const char* backend_plan = std::getenv("FIDELITY_BACKEND_PLAN");
  const bool small_backend = backend_plan != nullptr && std::string(backend_plan) == "run";
  auto backend = MakeBackend("mpi", BackendOptionsFor(config, small_backend ? run_plan : *plan), w);
  if (!backend.ok()) {
    std::cerr << "fidelity_pair: " << backend.status().message() << "\n";
    return 2;
  }
  // The plain loop's buffers are fdrill's backend's own (its send and
  // receive buffers, as fdrill's loop leaves them): both loops then read and
  // write the same pages, and where a job's pages happen to land (cache
  // sets, huge pages) favours neither. FIDELITY_PLAIN_BUFFERS=own (an
  // experiment) gives the plain loop buffers of its own instead.
  const char* buffers_env = std::getenv("FIDELITY_PLAIN_BUFFERS");
  const bool own_buffers = buffers_env != nullptr && std::string(buffers_env) == "own";
  std::vector<float> own_in(own_buffers ? kMaxBytes / 4 : 0, 0.0f);
  std::vector<float> own_out(own_buffers ? kMaxBytes / 4 : 0, 0.0f);
  for (const SizeStep& step : run_plan) {
    for (int round = first; round < first + rounds; ++round) {
      for (int half = 0; half < 2; ++half) {
        if ((half == 0) == (round % 2 == 1)) {
          std::span<float> in(own_in), out(own_out);
          if (!own_buffers) {
            if (Status s = (*backend)->SetLayout(step.layout); !s.ok()) return 2;
            std::span<std::byte> send = (*backend)->HostInput();
            std::span<std::byte> recv = (*backend)->HostOutput();
            in = {reinterpret_cast<float*>(send.data()), send.size() / sizeof(float)};
            out = {reinterpret_cast<float*>(recv.data()), recv.size() / sizeof(float)};
          }
          PlainBlock(static_cast<long>(step.bytes), round, std::stoi(iters), in, out);
          continue;
        }
        const std::string path =
            dir + "/round" + std::to_string(round) + "/r" + std::to_string(w.rank()) + ".jsonl";
        auto metrics = MetricsWriter::Open(path, /*append=*/true);
        if (!metrics.ok()) {
          std::cerr << "fidelity_pair: " << metrics.status().message() << "\n";
          w.Abort(2);
        }
        Result<RunOutcome> outcome =
            RunWorkload(config, {step}, w, **backend, metrics->get(), std::cerr);
        if (!outcome.ok() || outcome->wrong > 0 || !(*metrics)->Flush().ok()) {
          std::cerr << "fidelity_pair: fdrill's loop failed on rank " << w.rank() << "\n";
          w.Abort(2);
        }
      }
    }
  }
  if (Status s = (*backend)->Close(); !s.ok()) return 2;
  return 0;
}

}  // namespace
}  // namespace fdrill

int main(int argc, char** argv) { return fdrill::Main(argc, argv); }

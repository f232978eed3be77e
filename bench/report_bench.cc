// report_bench: how long the full report of a big run takes. Writes a run
// directory with 1 M metrics records (4 ranks × 250 k iterations of a 1 MB
// all_reduce, a 3× slow-link fault from 100 to 130 s; --records N for N)
// under $TMPDIR, then times
//   baseline   reading metrics.jsonl and parsing every line with nlohmann::json
//              (the floor any JSON-lines reader pays), and
//   report     WriteReports: load, analyze, and write summary.json, report.md,
//              report.html and junit.xml,
// and prints report / baseline and the process's peak RSS. The targets: at
// 1 M records the report in <= 5 s (issue 7), at 10 M in <= 15 s (issue 25:
// day-long burn-ins), i.e. max(5 s, 1.5 s per million records).
// With --faults N the run is bench/many_faults_run.h's instead (N agents,
// a fault on each, every agent's counters each second: the report's cost
// per fault), the baseline parses its events.jsonl, and there is no target.
//   build/bin/report_bench [--records N] [--iterations N] [--faults N] [--keep]
//                          [--dir DIR] [--no-baseline] [benchmark flags]
// --keep leaves the run directory; --dir DIR reports on such a kept one
// instead of writing a new one (10 M records are 3 GB and take a while; pass
// its --records too, for the target), also after `zstd --rm DIR/metrics.jsonl`
// (then without the nlohmann baseline);
// --no-baseline skips the nlohmann parse (70 s at 10 M records).
// Exits 1 when the report is over the target.
#include <stdlib.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/many_faults_run.h"
#include "reports/line_reader.h"
#include "reports/metrics_file.h"
#include "reports/report.h"

namespace {

namespace fs = std::filesystem;

constexpr int kRanks = 4;
constexpr int64_t kRecords = 1'000'000;
constexpr int64_t kBytes = 1'000'000;
constexpr double kBaseMs = 1.0;
constexpr double kFaultFrom = 100, kFaultTo = 130;

// Issue 7: 5 s at 1 M records; issue 25: 15 s at 10 M.
double TargetSeconds(int64_t records) {
  return std::max(5.0, 1.5 * static_cast<double>(records) / 1e6);
}

// The peak resident set of this process so far, in MiB.
double PeakRssMib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024;  // ru_maxrss is in KiB
}

void Write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) {
    std::fprintf(stderr, "report_bench: cannot write %s\n", path.c_str());
    std::exit(2);
  }
}

// The run directory as the controller writes it (docs/reference/formats.md), with
// `iterations` iterations of kRanks records each.
void Generate(const fs::path& dir, int64_t iterations) {
  Write(dir / "plan.json", R"({"name":"report-bench","nodes":["n0","n1","n2","n3"],"ranks":4,)"
                           R"("recovery_window_iters":5,"expectations":{"max_slowdown":5.0,)"
                           R"("max_time_to_recover_s":10.0,"no_residue":true,"data_intact":true}})"
                           "\n");
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> jitter(-0.01, 0.01);
  std::ofstream metrics(dir / "metrics.jsonl", std::ios::binary | std::ios::trunc);
  std::string chunk;  // written a few MB at a time
  double t = 1.0;
  for (int64_t iter = 0; iter < iterations; ++iter) {
    const bool slow = t >= kFaultFrom && t < kFaultTo;
    const double time_ms = kBaseMs * (slow ? 3 : 1) * (1 + jitter(rng));
    const double end = t + time_ms / 1000;
    for (int rank = 0; rank < kRanks; ++rank) {
      const double rank_ms = rank == 2 || !slow ? time_ms : time_ms * 0.99;
      const double algbw = static_cast<double>(kBytes) / rank_ms / 1e6;
      fmt::format_to(std::back_inserter(chunk),
                     R"({{"rank":{0},"nranks":4,"host":"n{0}","node":"n{0}","iter":{1},)"
                     R"("op":"all_reduce","dtype":"float32","redop":"sum","bytes":{2},)"
                     R"("count":{3},"wall_ns":{4},"mono_ns":{5},"time_ms":{6},)"
                     R"("algbw_gbps":{7},"busbw_gbps":{8},"wrong":0,"t":{9}}})"
                     "\n",
                     rank, iter, kBytes, kBytes / 4, static_cast<int64_t>((1.7e9 + end) * 1e9),
                     static_cast<int64_t>(end * 1e9), rank_ms, algbw, algbw * 1.5, end);
    }
    if (chunk.size() > (4 << 20)) {
      metrics << chunk;
      chunk.clear();
    }
    t = end;
  }
  metrics << chunk;
  if (!metrics.flush()) {
    std::fprintf(stderr, "report_bench: cannot write %s\n", (dir / "metrics.jsonl").c_str());
    std::exit(2);
  }
  const double run_end = t + 0.1;
  std::string events;
  auto event = [&](double at, const std::string& rest) {
    events += fmt::format(R"({{"t":{},{}}})", at, rest) + "\n";
  };
  event(0, R"("type":"drill_start","name":"report-bench")");
  event(0.5, R"("type":"phase_start","phase":"baseline")");
  event(kFaultFrom, R"("type":"phase_end","phase":"baseline")");
  event(kFaultFrom, R"("type":"phase_start","phase":"slow-link")");
  event(kFaultFrom, R"("type":"fault_applied","id":"slow-link","kind":"link_rate",)"
                    R"("node":"n2","target":"fab0","verified":true)");
  event(kFaultTo, R"("type":"fault_reverted","id":"slow-link","node":"n2","verified":true)");
  event(kFaultTo, R"("type":"phase_end","phase":"slow-link")");
  event(kFaultTo, R"("type":"phase_start","phase":"recovery")");
  event(run_end, R"("type":"phase_end","phase":"recovery")");
  for (int r = 0; r < kRanks; ++r) {
    event(run_end, fmt::format(R"("type":"workload_exit","node":"n{}","exit_code":0)", r));
  }
  event(run_end, R"("type":"residue","items":[])");
  event(run_end, R"("type":"drill_end","status":"completed")");
  Write(dir / "events.jsonl", events);
}

void ParseWithNlohmann(benchmark::State& state, const fs::path& file) {
  for (auto _ : state) {
    std::ifstream in(file, std::ios::binary);
    std::string line;
    size_t objects = 0;
    while (std::getline(in, line)) {
      nlohmann::json j = nlohmann::json::parse(line);
      objects += j.size();
    }
    benchmark::DoNotOptimize(objects);
  }
}

void FullReport(benchmark::State& state, const fs::path& dir) {
  for (auto _ : state) {
    fdrill::Result<fdrill::Summary> summary = fdrill::WriteReports(dir.string());
    if (!summary.ok()) {
      state.SkipWithError(summary.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(summary->verdict);
  }
}

// Keeps each benchmark's mean wall time, in seconds.
class Recorder : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type == Run::RT_Iteration && r.iterations > 0) {
        seconds[r.run_name.function_name] =
            r.real_accumulated_time / static_cast<double>(r.iterations);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> seconds;
};

}  // namespace

int main(int argc, char** argv) {
  int iterations = 3;
  int faults = 0;  // 0: the metrics run of `records` records
  int64_t records = kRecords;
  bool keep = false;
  bool baseline = true;
  std::string reuse;  // --dir: a kept run directory
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--faults") == 0 && i + 1 < argc) {
      faults = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--records") == 0 && i + 1 < argc) {
      records = std::max<int64_t>(kRanks, std::atoll(argv[++i]));
    } else if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
      reuse = argv[++i];
    } else if (std::strcmp(argv[i], "--no-baseline") == 0) {
      baseline = false;
    } else if (std::strcmp(argv[i], "--keep") == 0) {
      keep = true;
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());

  std::string pattern = (fs::temp_directory_path() / "fdrill-report-bench-XXXXXX").string();
  if (!reuse.empty()) {
    pattern = reuse;
    keep = true;  // not ours to remove
  } else if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("report_bench: mkdtemp");
    return 2;
  }
  const fs::path dir = pattern;
  const char* parsed = faults > 0 ? "events.jsonl" : "metrics.jsonl";
  if (!reuse.empty()) {
    // A kept run may have had its metrics compressed (zstd --rm): the
    // report reads metrics.jsonl.zst alike; the nlohmann baseline does not.
    const fs::path metrics = fdrill::MetricsFileOf(dir);
    if (metrics.empty()) {
      std::fprintf(stderr, "report_bench: %s has no metrics.jsonl(.zst)\n", dir.c_str());
      return 2;
    }
    std::printf("run directory %s (kept): %s %.0f MB\n", dir.c_str(), metrics.filename().c_str(),
                static_cast<double>(fs::file_size(metrics)) / 1e6);
    if (metrics.extension() == fdrill::kZstdSuffix) baseline = false;
  } else if (faults > 0) {
    fdrill::bench::WriteManyFaultsRun(dir, faults);
    std::printf("run directory %s: %d faults, events.jsonl %.1f MB\n", dir.c_str(), faults,
                static_cast<double>(fs::file_size(dir / parsed)) / 1e6);
  } else {
    Generate(dir, records / kRanks);
    std::printf("run directory %s: metrics.jsonl %.0f MB, %lld records\n", dir.c_str(),
                static_cast<double>(fs::file_size(dir / parsed)) / 1e6,
                static_cast<long long>(records / kRanks * kRanks));
  }

  if (baseline) {
    benchmark::RegisterBenchmark("baseline_nlohmann_parse", ParseWithNlohmann, dir / parsed)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(iterations)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark("full_report", FullReport, dir)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(iterations)
      ->UseRealTime();
  Recorder recorder;
  benchmark::RunSpecifiedBenchmarks(&recorder);
  benchmark::Shutdown();

  int rc = 0;
  auto base = recorder.seconds.find("baseline_nlohmann_parse");
  auto full = recorder.seconds.find("full_report");
  if (full != recorder.seconds.end()) {
    std::printf("\nfull report %.2f s", full->second);
    if (base != recorder.seconds.end()) {
      std::printf(", nlohmann parse of %s %.2f s: ratio %.2f", parsed, base->second,
                  full->second / base->second);
    }
    if (faults > 0) {
      std::printf("\n");
    } else {
      const double target = TargetSeconds(records);
      std::printf("; target <= %.1f s: %s\n", target, full->second <= target ? "met" : "MISSED");
      if (full->second > target) rc = 1;
    }
    std::printf("peak RSS of this process: %.0f MiB\n", PeakRssMib());
    std::printf("report.html: %.0f kB\n",
                static_cast<double>(fs::file_size(dir / fdrill::kHtmlReportFile)) / 1e3);
  }
  if (keep) {
    std::printf("kept %s\n", dir.c_str());
  } else {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  return rc;
}

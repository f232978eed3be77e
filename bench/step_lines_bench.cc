// step_lines_bench: how many of a trainer's log lines a second the step-line
// reader (workloads/step_lines.h) reads on one core, per preset, against the
// floor measured in the same run: splitting the same text into lines and
// looking each line over once (what any reader of the log pays). Target
// (issue 50): at least 100,000 lines a second. Half the lines are step lines
// of the preset, half a trainer's other output (a warning, a config dump).
//   build/bin/step_lines_bench [--lines N]
// docs/performance.md has the figures.
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "workloads/step_lines.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Sample {
  const char* preset;
  const char* step_line;  // a real one (tests/workloads/data/step_lines/README.md)
};

const Sample kSamples[] = {
    {"megatron",
     " [2024-04-06 03:02:12] iteration       71/     100 | consumed samples:         9088 | "
     "elapsed time per iteration (ms): 5361.6 | throughput per GPU (TFLOP/s/GPU): 243.6 | learning "
     "rate: 1.420000E-05 | global batch size:   128 | lm loss: 1.818812E+00 | loss scale: 1.0 | "
     "grad norm: 1.300 | number of skipped iterations:   0 | number of nan iterations:   0 |"},
    {"torchtitan",
     "[titan] 2026-02-24 19:46:19,145 - root - INFO - step:  5  loss:  7.07623  grad_norm: "
     "46.5000  memory: 66.91GiB(37.51%)  tps: 10,007  tflops: 313.36  mfu: 13.93%"},
    {"deepspeed",
     "[2024-07-17 19:53:24,981] [INFO] [timer.py:258:stop] epoch=0/micro_step=4500/"
     "global_step=4500, RunningAvgSamplesPerSec=16.124955167964504, "
     "CurrSamplesPerSec=16.807402094161112, MemAllocated=0.02GB, MaxMemAllocated=0.97GB"},
    {"deepspeed-pipe", "steps: 30 loss: 10.7133 iter time (s): 0.283 samples/sec: 226.457"},
    {"hf-trainer", " 98%|█████████▊| 2086/2120 [26:01<00:22,  1.49it/s]"},
    {"lightning", "Epoch 1:   4%|▎         | 40/1095 [00:03<01:37, 10.84it/s, v_num=10]"},
};

const char kOther[] =
    "[2026-12-07 02:03:04,567] [WARNING] [torch/distributed/distributed_c10d.py:1234] "
    "NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING";

// N lines: step lines (their step number counting up) and other lines, alternately.
std::string Log(const Sample& s, int n) {
  std::string out;
  const std::string line = s.step_line;
  for (int i = 0; i < n; ++i) {
    if (i % 2 == 1) {
      out += kOther;
    } else {
      // Each step line's number moves forward, as a job's do: the first
      // run of digits after the preset's step marker is rewritten.
      std::string l = line;
      const std::string marker = std::string(s.preset) == "megatron"         ? "iteration"
                                 : std::string(s.preset) == "torchtitan"     ? "step:"
                                 : std::string(s.preset) == "deepspeed"      ? "global_step="
                                 : std::string(s.preset) == "deepspeed-pipe" ? "steps:"
                                 : std::string(s.preset) == "hf-trainer"     ? "| "
                                                                             : "| ";
      size_t at = l.find(marker);
      at = l.find_first_of("0123456789", at);
      const size_t end = l.find_first_not_of("0123456789", at);
      l.replace(at, end - at, std::to_string(1000 + i));
      out += l;
    }
    out += '\n';
  }
  return out;
}

template <typename F>
double LinesPerSecond(const std::string& text, int lines, F per_line) {
  const auto t0 = Clock::now();
  size_t from = 0;
  double t = 0;
  while (from < text.size()) {
    const size_t nl = text.find('\n', from);
    per_line(std::string_view(text).substr(from, nl - from), t);
    t += 0.001;
    from = nl + 1;
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return lines / s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("step_lines_bench: the step-line reader's lines a second against the floor");
  int lines = 200000;
  app.add_option("--lines", lines, "lines per preset")->check(CLI::Range(1000, 100000000));
  CLI11_PARSE(app, argc, argv);

  std::printf("%-15s %14s %14s %8s %8s\n", "preset", "floor lines/s", "reader lines/s", "ratio",
              "records");
  bool all_fast = true;
  size_t floor_seen = 0;  // what the floor found: its work is used, not optimised away
  for (const Sample& s : kSamples) {
    const std::string text = Log(s, lines);
    size_t seen = 0;
    const double floor = LinesPerSecond(text, lines, [&](std::string_view l, double) {
      seen += l.find('|') != std::string_view::npos;  // look every line over once
    });
    auto reader = fdrill::StepLineReader::Make(s.preset, "");
    if (!reader.ok()) {
      std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
      return 2;
    }
    size_t records = 0;
    const double read = LinesPerSecond(
        text, lines, [&](std::string_view l, double t) { records += reader->Feed(l, t).size(); });
    std::printf("%-15s %14.0f %14.0f %8.3f %8zu\n", s.preset, floor, read, read / floor, records);
    all_fast = all_fast && read >= 100000;
    floor_seen += seen;
  }
  std::printf("floor: %zu lines held a '|'\n", floor_seen);
  std::printf("target >= 100000 lines/s on one core: %s\n", all_fast ? "met" : "NOT met");
  return 0;
}

// Step metrics from a training job's own output, with no change to the job
// (issue 50): a regular expression with named groups, or a preset for the
// log lines of the trainers operators run (Megatron-LM, torchtitan,
// DeepSpeed, the Hugging Face Trainer, PyTorch Lightning). Each matched
// line is one step record: its step number and its time, read from the
// line (`time_ms` / `time_s` groups) or, where the line carries none, the
// interval since the previous step line as read, spread over the steps
// between them (a trainer that logs every 10th step). Pure: the caller says
// when it read each line. The presets' lines, quoted from each project's
// source or docs, are in tests/workloads/data/step_lines/README.md.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "common/core/result.h"

namespace fdrill {

struct StepRecord {
  int64_t step = 0;
  double time_ms = 0;
  // The time came from the line itself, not from when it was read.
  bool timed_by_job = false;
  std::optional<double> loss;
  std::optional<double> tokens_per_s;
  std::optional<double> samples_per_s;
};

// The presets, by name: "megatron", "torchtitan", "deepspeed",
// "deepspeed-pipe", "hf-trainer", "lightning".
const std::vector<std::string>& StepLinePresets();

class StepLineReader {
 public:
  // PRESET (one of StepLinePresets) or PATTERN (an ECMAScript regular
  // expression whose groups are named `(?<name>...)` or `(?P<name>...)`:
  // `step` required, or `batch` with `epoch` and `batches` (step = epoch x
  // batches + batch, a progress bar's count); the time from `time_ms`,
  // `time_s`, `s_per_it` or `it_per_s` when the line has one; `loss`,
  // `tokens_per_s`, `samples_per_s` optional), exactly one of them. InvalidArgument naming
  // what is wrong: an unknown preset (with the list), a pattern that does
  // not compile (with the library's reason), one without a `step` group, a
  // group name it does not know.
  static Result<StepLineReader> Make(const std::string& preset, const std::string& pattern);

  // One line of the job's output (without its newline), read at NOW_S
  // (seconds, any steady origin): its step records — one per '\r'-separated
  // redraw that matched (a progress bar) — leaving out a line that is not a
  // step line, the first step line when the time comes from the interval
  // (there is no interval yet), and a step number that does not move
  // forward (a redraw; a relaunched job gets a reader of its own).
  std::vector<StepRecord> Feed(std::string_view line, double now_s);

  // The pattern in use (a preset's expanded), for messages.
  const std::string& pattern() const { return pattern_; }

 private:
  StepLineReader() = default;
  std::optional<StepRecord> FeedOne(std::string_view line, double now_s);
  std::string pattern_;
  std::string holds_;  // a preset's: text every step line holds
  std::regex re_;
  int step_ = 0;  // capture indices; 0 = not in the pattern
  int epoch_ = 0, batch_ = 0, batches_ = 0;
  int time_ms_ = 0, time_s_ = 0, it_per_s_ = 0, s_per_it_ = 0;
  int loss_ = 0, tokens_ = 0, samples_ = 0;
  std::optional<int64_t> last_step_;
  std::optional<double> last_read_s_;
};

// PATTERN with its named groups made plain: `(?<name>` and `(?P<name>`
// become `(`; NAMES receives each capture's name in order ("" for an
// unnamed one). InvalidArgument for an unterminated name.
Result<std::string> StripGroupNames(const std::string& pattern, std::vector<std::string>* names);

}  // namespace fdrill

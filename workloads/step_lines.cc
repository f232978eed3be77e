#include "workloads/step_lines.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/core/did_you_mean.h"

namespace fdrill {

namespace {

struct Preset {
  const char* name;
  const char* pattern;
  // Text every line the pattern matches holds: a line without it is not
  // searched (half a trainer's output is other lines).
  const char* holds;
};

// The lines each preset reads are quoted, with their sources, in
// tests/workloads/data/step_lines/README.md; step_lines_test holds each
// preset to them.
const std::vector<Preset>& Presets() {
  static const std::vector<Preset> kPresets = {
      // Megatron-LM's training_log (megatron/training/training.py), printed
      // by the last rank every log_interval: "iteration 71/ 100 | ... |
      // elapsed time per iteration (ms): 5361.6 | ... | lm loss: 1.8E+00 |".
      // The time is the mean over the steps since the last line.
      {"megatron",
       R"(iteration\s+(?<step>\d+)/\s*\d+\s*\|.*?elapsed time per iteration \(ms\):\s*(?<time_ms>[0-9.]+)(?:.*?\blm[ _]loss:\s*(?<loss>[-+0-9.eE]+))?)",
       "elapsed time per iteration"},
      // torchtitan's MetricsProcessor.log (ANSI colours by default), step 1
      // and every log_freq: "INFO - step:  4  loss:  7.62585  ...  tps:
      // 10,050  ...". No time: the interval between lines.
      {"torchtitan",
       R"(INFO - (?:\x1b\[[0-9;]*m)?step:\s*(?<step>\d+)\s+(?:\x1b\[[0-9;]*m)?loss:\s*(?<loss>[-+0-9.eE]+).*?tps:\s*(?<tokens_per_s>[0-9,]+))",
       "tps:"},
      // DeepSpeed's ThroughputTimer (deepspeed/utils/timer.py), every
      // steps_per_print (unset by default since v0.15.2): "epoch=0/
      // micro_step=34/global_step=34, RunningAvgSamplesPerSec=7.86...,
      // CurrSamplesPerSec=8.00...". No time: the interval between lines.
      {"deepspeed",
       R"(global_step=(?<step>\d+), RunningAvgSamplesPerSec=[^,]+, CurrSamplesPerSec=(?<samples_per_s>[-+0-9.eE]+))",
       "global_step="},
      // DeepSpeed's pipeline engine (deepspeed/runtime/pipe/engine.py):
      // "steps: 30 loss: 10.7133 iter time (s): 0.283 samples/sec: 226.457".
      {"deepspeed-pipe",
       R"(steps: (?<step>\d+) loss: (?<loss>[-+0-9.eE]+) (?:.* )?iter time \(s\): (?<time_s>[0-9.]+) samples/sec: (?<samples_per_s>[0-9.]+))",
       "iter time (s)"},
      // The Hugging Face Trainer's tqdm bar (on stderr; its per-step dict
      // carries no step number): " 98%|█████████▊| 2086/2120 [26:01<00:22,
      // 1.49it/s]", the step the global optimizer step.
      {"hf-trainer",
       R"(^\s*\d+%\|[^|]*\|\s*(?<step>\d+)/\d+ \[[0-9:]+<[0-9:?]+,\s*(?:(?<it_per_s>[0-9.]+)it/s|(?<s_per_it>[0-9.]+)s/it))",
       "%|"},
      // PyTorch Lightning's TQDMProgressBar: "Epoch 1:   4%|▎         |
      // 40/1095 [00:03<01:37, 10.84it/s, v_num=10]" (s/it before 2.1; no bar
      // in some terminals); the count is the batch within the epoch.
      {"lightning",
       R"(Epoch (?<epoch>\d+):\s+\d*%?(?:\|[^|]*\|)?\s*(?<batch>\d+)/(?<batches>\d+) \[[0-9:]+<[0-9:?]+,\s*(?:(?<it_per_s>[0-9.]+)it/s|(?<s_per_it>[0-9.]+)s/it)(?:.*?[ ,]train_loss(?:_step)?=(?<loss>[-+0-9.eE]+))?)",
       "Epoch "},
  };
  return kPresets;
}

const std::vector<std::string> kGroups = {"step",    "epoch",        "batch",        "batches",
                                          "time_ms", "time_s",       "it_per_s",     "s_per_it",
                                          "loss",    "tokens_per_s", "samples_per_s"};

std::optional<double> Number(const std::ssub_match& m) {
  if (!m.matched) return std::nullopt;
  std::string text = m.str();
  std::erase(text, ',');
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

const std::vector<std::string>& StepLinePresets() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const Preset& p : Presets()) out.push_back(p.name);
    return out;
  }();
  return kNames;
}

Result<std::string> StripGroupNames(const std::string& pattern, std::vector<std::string>* names) {
  std::string out;
  out.reserve(pattern.size());
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      out += c;
      out += pattern[++i];
      continue;
    }
    if (in_class) {
      in_class = c != ']';
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
      continue;
    }
    if (c != '(') {
      out += c;
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '?') {
      size_t name_at = 0;
      if (i + 2 < pattern.size() && pattern[i + 2] == '<' && i + 3 < pattern.size() &&
          pattern[i + 3] != '=' && pattern[i + 3] != '!') {
        name_at = i + 3;
      } else if (i + 3 < pattern.size() && pattern[i + 2] == 'P' && pattern[i + 3] == '<') {
        name_at = i + 4;
      }
      if (name_at == 0) {  // (?: (?= (?! : not a capture
        out += c;
        continue;
      }
      const size_t close = pattern.find('>', name_at);
      if (close == std::string::npos) {
        return InvalidArgument(
            fmt::format("a group name at column {} has no closing '>'", name_at + 1));
      }
      names->push_back(pattern.substr(name_at, close - name_at));
      out += '(';
      i = close;
      continue;
    }
    names->push_back("");
    out += c;
  }
  return out;
}

Result<StepLineReader> StepLineReader::Make(const std::string& preset, const std::string& pattern) {
  if (preset.empty() == pattern.empty()) {
    return InvalidArgument("give exactly one of a preset (" +
                           fmt::format("{}", fmt::join(StepLinePresets(), ", ")) +
                           ") or a pattern");
  }
  StepLineReader r;
  if (!preset.empty()) {
    auto p = std::find_if(Presets().begin(), Presets().end(),
                          [&](const Preset& x) { return preset == x.name; });
    if (p == Presets().end()) {
      const std::set<std::string> names(StepLinePresets().begin(), StepLinePresets().end());
      const std::string hint = DidYouMean(preset, names);
      return InvalidArgument(fmt::format("unknown preset \"{}\"{} (presets: {})", preset,
                                         hint.empty() ? "" : "; " + hint, fmt::join(names, ", ")));
    }
    r.pattern_ = p->pattern;
    r.holds_ = p->holds;
  } else {
    r.pattern_ = pattern;
  }
  std::vector<std::string> names;
  auto plain = StripGroupNames(r.pattern_, &names);
  if (!plain.ok()) return plain.status();
  try {
    r.re_ = std::regex(*plain, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return InvalidArgument(
        fmt::format("pattern \"{}\" does not compile: {}", r.pattern_, e.what()));
  }
  std::map<std::string, int> at;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) continue;
    if (std::find(kGroups.begin(), kGroups.end(), names[i]) == kGroups.end()) {
      return InvalidArgument(fmt::format("pattern \"{}\": unknown group name \"{}\": names are {}",
                                         r.pattern_, names[i], fmt::join(kGroups, ", ")));
    }
    at[names[i]] = static_cast<int>(i) + 1;
  }
  r.step_ = at["step"];
  r.epoch_ = at["epoch"];
  r.batch_ = at["batch"];
  r.batches_ = at["batches"];
  r.time_ms_ = at["time_ms"];
  r.time_s_ = at["time_s"];
  r.it_per_s_ = at["it_per_s"];
  r.s_per_it_ = at["s_per_it"];
  r.loss_ = at["loss"];
  r.tokens_ = at["tokens_per_s"];
  r.samples_ = at["samples_per_s"];
  if (r.step_ == 0 && r.batch_ == 0) {
    return InvalidArgument(
        fmt::format("pattern \"{}\" has no (?<step>...) group: the step number is what a record is",
                    r.pattern_));
  }
  return r;
}

std::vector<StepRecord> StepLineReader::Feed(std::string_view line, double now_s) {
  std::vector<StepRecord> out;
  // A progress bar redraws itself with '\r': each redraw is a line.
  size_t from = 0;
  while (from <= line.size()) {
    size_t cr = line.find('\r', from);
    if (cr == std::string_view::npos) cr = line.size();
    if (cr > from) {
      if (auto r = FeedOne(line.substr(from, cr - from), now_s)) out.push_back(*r);
    }
    from = cr + 1;
  }
  return out;
}

std::optional<StepRecord> StepLineReader::FeedOne(std::string_view line, double now_s) {
  if (!holds_.empty() && line.find(holds_) == std::string_view::npos) return std::nullopt;
  std::smatch m;
  const std::string text(line);
  if (!std::regex_search(text, m, re_)) return std::nullopt;
  auto group = [&](int i) -> std::optional<double> {
    return i > 0 ? Number(m[static_cast<size_t>(i)]) : std::nullopt;
  };
  StepRecord r;
  if (step_ > 0) {
    auto step = group(step_);
    if (!step) return std::nullopt;
    r.step = static_cast<int64_t>(*step);
  } else {
    auto batch = group(batch_);
    if (!batch) return std::nullopt;
    r.step = static_cast<int64_t>(group(epoch_).value_or(0) * group(batches_).value_or(0) + *batch);
  }
  r.loss = group(loss_);
  r.tokens_per_s = group(tokens_);
  r.samples_per_s = group(samples_);
  if (auto ms = group(time_ms_)) {
    r.time_ms = *ms;
    r.timed_by_job = true;
  } else if (auto s = group(time_s_)) {
    r.time_ms = *s * 1000;
    r.timed_by_job = true;
  } else if (auto s = group(s_per_it_)) {
    r.time_ms = *s * 1000;
    r.timed_by_job = true;
  } else if (auto rate = group(it_per_s_); rate && *rate > 0) {
    r.time_ms = 1000 / *rate;
    r.timed_by_job = true;
  }
  const std::optional<int64_t> previous = last_step_;
  const std::optional<double> previous_read = last_read_s_;
  if (previous && r.step <= *previous) return std::nullopt;  // a redraw, or a restart's replay
  last_step_ = r.step;
  last_read_s_ = now_s;
  if (!r.timed_by_job) {
    if (!previous || !previous_read) return std::nullopt;
    r.time_ms = (now_s - *previous_read) * 1000 / static_cast<double>(r.step - *previous);
  }
  return r;
}

}  // namespace fdrill

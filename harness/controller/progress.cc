#include "harness/controller/progress.h"

#include <fmt/format.h>

namespace fdrill {

namespace {
std::string Seconds(Duration d) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
}
}  // namespace

std::string FormatProgress(const ProgressView& v) {
  std::string out = fmt::format("[{:>5} / {}{}] {}", Seconds(v.elapsed), v.total_is_max ? "<=" : "",
                                Seconds(v.total), v.phase.empty() ? "starting" : v.phase);
  if (v.busbw_gbps && v.steps) {
    // A step rate reads better as the step time operators log.
    out += fmt::format(" | step {:.0f} ms", 1000.0 / *v.busbw_gbps);
    if (v.baseline_gbps && *v.baseline_gbps > 0) {
      out += fmt::format(" = {:.2f}x baseline {:.0f} ms", *v.baseline_gbps / *v.busbw_gbps,
                         1000.0 / *v.baseline_gbps);
    }
  } else if (v.busbw_gbps) {
    out += fmt::format(" | busbw {:.3g} GB/s", *v.busbw_gbps);
    if (v.baseline_gbps && *v.baseline_gbps > 0) {
      out += fmt::format(" = {:.2f}x baseline {:.3g}", *v.busbw_gbps / *v.baseline_gbps,
                         *v.baseline_gbps);
    }
  } else {
    out += v.steps ? " | step -" : " | busbw -";
  }
  if (v.attempt > 0) out += fmt::format(" | restart {}/{}", v.attempt, v.restarts_allowed);
  if (v.faults.empty()) {
    out += " | no faults";
  } else {
    out += " | faults: ";
    for (size_t i = 0; i < v.faults.size(); ++i) out += (i ? ", " : "") + v.faults[i];
    if (!v.culprit.empty()) out += " | culprit: " + v.culprit;
  }
  return out;
}

void ProgressLine::Update(const ProgressView& v, Clock::TimePoint now) {
  if (terminal_) {
    if (last_ && now - *last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    std::fprintf(out_, "\r%s\x1b[K", FormatProgress(v).c_str());
    std::fflush(out_);
    shown_ = true;
    return;
  }
  std::string key = v.phase;
  for (const auto& f : v.faults) key += "|" + f;
  key += "|" + v.culprit;
  if (key == last_key_ && last_ && now - *last_ < std::chrono::seconds(10)) return;
  last_key_ = key;
  last_ = now;
  std::fprintf(out_, "fdrill: %s\n", FormatProgress(v).c_str());
  std::fflush(out_);
}

void ProgressLine::Finish() {
  if (terminal_ && shown_) {
    std::fputc('\n', out_);
    std::fflush(out_);
  }
  shown_ = false;
}

}  // namespace fdrill

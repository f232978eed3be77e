// The live progress line of `fdrill run`: phase, elapsed / total, current
// busbw against the baseline, faults in force and what the live
// localisation names for them.
//
//   [  42s / 2m00s] flap | busbw 0.81 GB/s = 0.46x baseline 1.76 | faults: port-flap@gpu03
//   | culprit: link gpu03 ib/mlx5_0/1 (high)
//
// On a terminal it is one line rewritten in place (\r, erase to end of
// line), at most 4 times a second; Finish() ends it with a newline. Not on
// a terminal (CI logs, `| tee`), it prints a plain line when the phase or
// the faults in force change, and every 10 s otherwise — a log stays
// readable and small. FormatProgress is pure (tests pin the text).
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/core/clock.h"
#include "common/core/units.h"

namespace fdrill {

struct ProgressView {
  std::string phase;  // "" before the first phase
  Duration elapsed{};
  Duration total{};  // the drill's length (at most, when gated)
  bool total_is_max = false;
  std::optional<double> busbw_gbps;  // now: LiveMonitor::LiveBusbw (a stall in progress counts)
  std::optional<double> baseline_gbps;
  bool steps = false;               // a job's step lines: the rates are steps/s
  std::vector<std::string> faults;  // "id@node", in force now
  std::string culprit;              // the live culprit ("link n1 fab0 (high)"); "" none
  int attempt = 0;                  // > 0: the job was relaunched this often
  int restarts_allowed = 0;
};

std::string FormatProgress(const ProgressView& v);

class ProgressLine {
 public:
  ProgressLine(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}
  void Update(const ProgressView& v, Clock::TimePoint now);
  void Finish();

 private:
  std::FILE* out_;
  bool terminal_;
  bool shown_ = false;
  std::optional<Clock::TimePoint> last_;
  std::string last_key_;  // phase + faults of the last plain line
};

}  // namespace fdrill

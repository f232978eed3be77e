// LiveMonitor: the controller's view of the job while the drill runs, built
// from the metrics records the agents push. Pure: times are given by the
// caller (durations since the timeline started), nothing is read or slept.
//
// An iteration is complete once every rank's record for it has arrived; its
// time is the largest wait_ms + time_ms over the ranks and its busbw is
// bytes x bus factor / that time — the definitions reports/README.md gives,
// so the live view and the report agree. The baseline band is frozen when
// the caller says the baseline phase ended (reports' BandLow formula).
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>

#include "common/core/units.h"
#include "harness/scenario/scenario.h"

namespace fdrill {

struct LiveSample {  // one rank's record for one iteration
  int64_t iter = 0;
  int rank = 0;
  Duration end{};  // when it ended, on the timeline
  double time_ms = 0;
  double wait_ms = 0;
  double bytes = 0;
  double bus_factor = 1;  // busbw / algbw as the record states it
  int64_t wrong = 0;
};

struct LiveIteration {
  int64_t iter = 0;
  Duration start{};
  Duration end{};
  double time_ms = 0;
  double busbw_gbps = 0;
};

class LiveMonitor {
 public:
  LiveMonitor(int ranks, const StopSpec& stop, int recovery_window);

  void Add(const LiveSample& s);
  void AddError() { ++errors_; }
  // Freezes the baseline band from the iterations complete so far.
  void EndBaseline();

  // The start of the oldest of the last recovery_window complete iterations
  // when every one of them is in the baseline band; nullopt otherwise (or
  // before the band exists).
  std::optional<Duration> StableSince() const;
  // The first stop condition met at `now`, as a sentence; nullopt if none.
  std::optional<std::string> StopReason(Duration now) const;

  // A relaunched workload (after a failure) starts numbering its steps again
  // from its checkpoint: forget half-seen iterations, keep the band, and
  // count quiet time from `now`.
  void NewAttempt(Duration now);
  // Since the last complete iteration (or the attempt's start).
  Duration QuietFor(Duration now) const { return now - last_end_; }
  // Whether this attempt has completed an iteration yet.
  bool AttemptReported() const { return attempt_complete_ > 0; }
  // The highest iteration (--train: step) this attempt completed; -1: none.
  int64_t last_complete_iter() const { return last_complete_iter_; }

  // The end of the latest complete iteration below the baseline band (the
  // live "impact" signal); nullopt before the band or when none was.
  std::optional<Duration> last_below_band_end() const { return last_below_end_; }
  // Whether an iteration is running below the band right now: since `since`
  // (or the last complete iteration, if later) longer has passed than an
  // iteration at the band's low edge takes, plus the baseline's gap between
  // iterations (its 95th percentile: the ranks' fill, check and record,
  // which no record's time covers), plus kPushSlack for records still on
  // their way. Impact seen before the slow iteration ends.
  bool SlowInProgress(Duration now, Duration since) const {
    const std::optional<Duration> at = SlowAt(since);
    return at && now > *at;
  }
  // The moment after which SlowInProgress(·, since) holds unless an
  // iteration completes first; nullopt before the band. The caller wakes
  // then rather than polling.
  std::optional<Duration> SlowAt(Duration since) const;
  // What records in flight need (issue 25): a rank's writer holds a record
  // at most 5 ms plus one iteration (workloads/metrics.h; an iteration of
  // 5 ms or more is written as it ends), the agent pushes on the file's
  // change (inotify), then one management round trip — a few ms on an idle
  // box; the rest is room for a loaded one's scheduling. (Before, the agents
  // pushed every 20 ms and this was 60 ms.)
  static constexpr Duration kPushSlack = std::chrono::milliseconds(20);

  std::optional<double> band_low() const { return band_low_; }
  // The baseline's median busbw (GB/s) once EndBaseline ran.
  std::optional<double> baseline_median() const { return baseline_median_; }
  // The median busbw of the last few complete iterations (what a progress
  // line shows: one slow iteration does not make it jump); nullopt before any.
  std::optional<double> RecentBusbw() const;
  // What the job moves now (the progress line, issue 49): the last few
  // complete iterations time-weighted (work done / time), with the
  // iteration in progress counted by its age past what one at the band's
  // low edge takes (SlowAt): a rank waiting past the band is slow now, so
  // during a 3 s link-down this falls towards zero instead of showing the
  // healthy iterations before it (~1x). Before the band: RecentBusbw.
  std::optional<double> LiveBusbw(Duration now) const;
  int64_t complete() const { return complete_count_; }

 private:
  struct Pending {
    int seen = 0;
    LiveIteration it;
    double bytes = 0;
    double bus_factor = 1;
  };
  void Complete(Pending& p);

  int ranks_;
  StopSpec stop_;
  int window_;
  std::map<int64_t, Pending> pending_;   // iterations still missing ranks
  std::deque<LiveIteration> recent_;     // the last max(window, for_iterations) complete ones
  std::vector<double> baseline_busbw_;   // until EndBaseline
  std::vector<double> baseline_gap_ms_;  // until EndBaseline: end-to-end minus the iteration
  Duration gap_{};                       // their 95th percentile
  bool baseline_done_ = false;
  std::optional<double> band_low_;
  std::optional<double> baseline_median_;
  int64_t complete_count_ = 0;
  int64_t attempt_complete_ = 0;
  std::optional<Duration> last_below_end_;
  double last_bytes_x_factor_ = 0;  // of the latest complete iteration
  int64_t last_complete_iter_ = -1;
  Duration last_end_{};
  int64_t previous_iter_ = -1;  // the iteration completed before the latest, and its end
  Duration previous_end_{};
  double max_time_ms_ = 0;
  int64_t max_time_iter_ = -1;
  int64_t wrong_ = 0;
  int errors_ = 0;
};

}  // namespace fdrill

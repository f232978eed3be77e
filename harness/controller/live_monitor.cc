#include "harness/controller/live_monitor.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/core/stats.h"
#include "reports/analysis.h"

namespace fdrill {

LiveMonitor::LiveMonitor(int ranks, const StopSpec& stop, int recovery_window)
    : ranks_(ranks), stop_(stop), window_(recovery_window) {}

void LiveMonitor::Add(const LiveSample& s) {
  wrong_ += s.wrong;
  if (s.iter <= last_complete_iter_ && !pending_.count(s.iter))
    return;  // late duplicate of a finished one
  Pending& p = pending_[s.iter];
  if (p.seen == 0) {
    p.it.iter = s.iter;
    p.it.end = s.end;
  }
  ++p.seen;
  p.it.end = std::max(p.it.end, s.end);
  p.it.time_ms = std::max(p.it.time_ms, s.time_ms + s.wait_ms);
  p.bytes = s.bytes;
  p.bus_factor = s.bus_factor;
  if (p.seen >= ranks_) {
    Complete(p);
    pending_.erase(s.iter);
  }
  // A rank that died leaves its iterations pending: keep the map bounded.
  while (pending_.size() > 4096) pending_.erase(pending_.begin());
}

void LiveMonitor::Complete(Pending& p) {
  LiveIteration it = p.it;
  it.start = it.end - std::chrono::duration_cast<Duration>(
                          std::chrono::duration<double, std::milli>(it.time_ms));
  it.busbw_gbps = it.time_ms > 0 ? p.bytes * p.bus_factor / (it.time_ms * 1e6) : 0;
  last_bytes_x_factor_ = p.bytes * p.bus_factor;
  ++complete_count_;
  ++attempt_complete_;
  last_complete_iter_ = std::max(last_complete_iter_, it.iter);
  last_end_ = std::max(last_end_, it.end);
  if (it.time_ms > max_time_ms_) {
    max_time_ms_ = it.time_ms;
    max_time_iter_ = it.iter;
  }
  if (!baseline_done_) {
    baseline_busbw_.push_back(it.busbw_gbps);
    if (previous_iter_ >= 0 && it.iter == previous_iter_ + 1 && it.start > previous_end_)
      baseline_gap_ms_.push_back(
          std::chrono::duration<double, std::milli>(it.start - previous_end_).count());
  }
  previous_iter_ = it.iter;
  previous_end_ = it.end;
  if (band_low_ && it.busbw_gbps < *band_low_)
    last_below_end_ = std::max(last_below_end_.value_or(it.end), it.end);
  recent_.push_back(it);
  const size_t keep = static_cast<size_t>(std::max(window_, stop_.for_iterations));
  while (recent_.size() > keep) recent_.pop_front();
}

std::optional<Duration> LiveMonitor::SlowAt(Duration since) const {
  if (!band_low_ || *band_low_ <= 0 || last_bytes_x_factor_ <= 0) return std::nullopt;
  const auto ceiling = std::chrono::duration_cast<Duration>(
      std::chrono::duration<double, std::milli>(last_bytes_x_factor_ / (*band_low_ * 1e6)));
  return std::max(last_end_, since) + ceiling + gap_ + kPushSlack;
}

void LiveMonitor::NewAttempt(Duration now) {
  pending_.clear();
  last_complete_iter_ = -1;
  previous_iter_ = -1;
  attempt_complete_ = 0;
  last_end_ = now;
}

void LiveMonitor::EndBaseline() {
  if (baseline_done_) return;
  baseline_done_ = true;
  auto median = Median(baseline_busbw_);
  auto mad = MedianAbsoluteDeviation(baseline_busbw_);
  if (median && mad) band_low_ = BandLow(*median, *mad);
  baseline_median_ = median;
  baseline_busbw_.clear();
  gap_ = std::chrono::duration_cast<Duration>(
      std::chrono::duration<double, std::milli>(Percentile(baseline_gap_ms_, 95).value_or(0)));
  baseline_gap_ms_.clear();
}

std::optional<Duration> LiveMonitor::StableSince() const {
  if (!band_low_ || static_cast<int>(recent_.size()) < window_) return std::nullopt;
  Duration since = Duration::max();
  for (size_t i = recent_.size() - static_cast<size_t>(window_); i < recent_.size(); ++i) {
    if (recent_[i].busbw_gbps < *band_low_) return std::nullopt;
    since = std::min(since, recent_[i].start);
  }
  return since;
}

std::optional<std::string> LiveMonitor::StopReason(Duration now) const {
  if (stop_.max_wrong_elements && wrong_ > *stop_.max_wrong_elements) {
    return fmt::format(
        "stop condition max_wrong_elements: {} elements failed the data check (limit {})", wrong_,
        *stop_.max_wrong_elements);
  }
  if (stop_.max_errors && errors_ > *stop_.max_errors) {
    return fmt::format("stop condition max_errors: {} errors (limit {})", errors_,
                       *stop_.max_errors);
  }
  if (stop_.max_iteration_time) {
    const double limit_ms = ToSeconds(*stop_.max_iteration_time) * 1e3;
    if (max_time_ms_ > limit_ms) {
      return fmt::format(
          "stop condition max_iteration_time: iteration {} took {:.0f} ms (limit {})",
          max_time_iter_, max_time_ms_, FormatDuration(*stop_.max_iteration_time));
    }
    const Duration quiet = QuietFor(now);
    if (quiet > *stop_.max_iteration_time) {
      return fmt::format(
          "stop condition max_iteration_time: no iteration completed for {:.1f} s (limit {})",
          ToSeconds(quiet), FormatDuration(*stop_.max_iteration_time));
    }
  }
  if (stop_.min_busbw_gbps && static_cast<int>(recent_.size()) >= stop_.for_iterations) {
    bool all_below = true;
    double worst = 1e300;
    for (size_t i = recent_.size() - static_cast<size_t>(stop_.for_iterations); i < recent_.size();
         ++i) {
      all_below = all_below && recent_[i].busbw_gbps < *stop_.min_busbw_gbps;
      worst = std::min(worst, recent_[i].busbw_gbps);
    }
    if (all_below) {
      return fmt::format(
          "stop condition min_busbw: busbw below {} GB/s for {} iterations in a row (lowest "
          "{:.4f})",
          *stop_.min_busbw_gbps, stop_.for_iterations, worst);
    }
  }
  return std::nullopt;
}

std::optional<double> LiveMonitor::LiveBusbw(Duration now) const {
  if (recent_.empty()) return std::nullopt;
  double moved = 0, secs = 0;  // GB·s/s x s: busbw x time, summed
  for (const auto& it : recent_) {
    secs += it.time_ms / 1e3;
    moved += it.busbw_gbps * it.time_ms / 1e3;
  }
  if (secs <= 0 || moved <= 0) return RecentBusbw();
  if (const std::optional<Duration> slow = SlowAt(last_end_); slow && now > *slow)
    secs += std::chrono::duration<double>(now - *slow).count();
  return moved / secs;
}

std::optional<double> LiveMonitor::RecentBusbw() const {
  std::vector<double> v;
  for (const auto& it : recent_) v.push_back(it.busbw_gbps);
  return Median(v);
}

}  // namespace fdrill

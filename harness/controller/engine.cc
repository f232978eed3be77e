#include "harness/controller/engine.h"

#include <algorithm>

namespace fdrill {

const char* ActionKindName(Action::Kind kind) {
  switch (kind) {
    case Action::kRevert:
      return "revert";
    case Action::kPhaseEnd:
      return "phase_end";
    case Action::kPhaseStart:
      return "phase_start";
    case Action::kApply:
      return "apply";
    case Action::kAbort:
      return "abort";
    case Action::kDone:
      return "done";
  }
  return "?";
}

DrillEngine::DrillEngine(const Scenario& scenario) : s_(scenario) {}

Duration DrillEngine::FaultStart(int f) const {
  return phase_start_ + s_.phases[phase_].faults[f].at;
}

std::optional<Duration> DrillEngine::FaultEnd(int f) const {
  const FaultSpec& spec = s_.phases[phase_].faults[f];
  if (spec.length.count() == 0) return std::nullopt;
  return phase_start_ + spec.at + spec.length;
}

void DrillEngine::StartPhase(int p, Duration at, std::vector<Action>* out) {
  phase_ = p;
  phase_start_ = at;
  faults_.assign(s_.phases[p].faults.size(), FaultState{});
  const PhaseSpec& ph = s_.phases[p];
  out->push_back({Action::kPhaseStart, p, -1, at,
                  ph.gate ? "until stable: at least " + FormatDuration(ph.duration) + ", at most " +
                                FormatDuration(ph.gate->timeout)
                          : "for " + FormatDuration(ph.duration)});
}

void DrillEngine::RevertApplied(Duration now, const std::string& reason, std::vector<Action>* out) {
  if (phase_ < 0) return;
  for (int f = 0; f < static_cast<int>(faults_.size()); ++f) {
    if (faults_[f].applied && !faults_[f].reverted) {
      faults_[f].reverted = true;
      out->push_back({Action::kRevert, phase_, f, now, reason});
    }
  }
}

std::vector<Action> DrillEngine::Abort(Duration now, const std::string& reason) {
  std::vector<Action> out;
  if (finished_) return out;
  RevertApplied(now, reason, &out);
  out.push_back({Action::kAbort, phase_, -1, now, reason});
  finished_ = true;
  return out;
}

std::vector<Action> DrillEngine::Advance(Duration now, const EngineInput& input) {
  std::vector<Action> out;
  if (finished_) return out;
  last_now_ = now;
  if (input.stop) return Abort(now, *input.stop);
  if (phase_ < 0) StartPhase(0, Duration{}, &out);
  // One transition at a time, earliest first; at one instant a revert comes
  // before the phase's end, which comes before the next phase's applies.
  while (!finished_) {
    const PhaseSpec& ph = s_.phases[phase_];
    int due_revert = -1, due_apply = -1;
    Duration revert_at = Duration::max(), apply_at = Duration::max();
    for (int f = 0; f < static_cast<int>(faults_.size()); ++f) {
      auto end = FaultEnd(f);
      if (faults_[f].applied && !faults_[f].reverted && end && *end <= now && *end < revert_at) {
        due_revert = f;
        revert_at = *end;
      }
      if (!faults_[f].applied && FaultStart(f) <= now && FaultStart(f) < apply_at) {
        due_apply = f;
        apply_at = FaultStart(f);
      }
    }
    const Duration min_end = phase_start_ + ph.duration;
    std::optional<std::string> end_reason;
    Duration end_at = Duration::max();
    bool timed_out = false;
    if (!ph.gate) {
      if (min_end <= now) {
        end_reason = "its duration elapsed (" + FormatDuration(ph.duration) + ")";
        end_at = min_end;
      }
    } else if (min_end <= now && input.stable_since && *input.stable_since >= phase_start_) {
      end_reason = "stable: " + std::to_string(s_.recovery_window_iters) +
                   " iterations in a row in the baseline band";
      end_at = now;  // when the monitor saw it
    } else if (phase_start_ + ph.gate->timeout <= now) {
      end_at = phase_start_ + ph.gate->timeout;
      timed_out = true;
      end_reason = "timeout " + FormatDuration(ph.gate->timeout) +
                   " without a stable window (on_timeout: continue)";
    }
    if (due_revert >= 0 && revert_at <= std::min(apply_at, end_at)) {
      faults_[due_revert].reverted = true;
      out.push_back({Action::kRevert, phase_, due_revert, revert_at,
                     "its window ended (" + FormatDuration(ph.faults[due_revert].length) + ")"});
      continue;
    }
    if (due_apply >= 0 && apply_at < end_at) {
      faults_[due_apply].applied = true;
      out.push_back({Action::kApply, phase_, due_apply, apply_at,
                     ph.faults[due_apply].at.count()
                         ? "+" + FormatDuration(ph.faults[due_apply].at) + " into the phase"
                         : "the phase started"});
      continue;
    }
    if (!end_reason) break;
    if (timed_out && ph.gate->abort_on_timeout) {
      auto more = Abort(end_at, "phase " + ph.name + " was not stable within its timeout " +
                                    FormatDuration(ph.gate->timeout));
      out.insert(out.end(), more.begin(), more.end());
      break;
    }
    RevertApplied(end_at, "its phase ended", &out);
    out.push_back({Action::kPhaseEnd, phase_, -1, end_at, *end_reason});
    if (phase_ + 1 == static_cast<int>(s_.phases.size())) {
      out.push_back({Action::kDone, phase_, -1, end_at, "the last phase ended"});
      finished_ = true;
      break;
    }
    StartPhase(phase_ + 1, end_at, &out);
  }
  return out;
}

std::optional<Duration> DrillEngine::NextDeadline() const {
  if (finished_) return std::nullopt;
  if (phase_ < 0) return Duration{};
  const PhaseSpec& ph = s_.phases[phase_];
  Duration next = phase_start_ + (ph.gate ? ph.gate->timeout : ph.duration);
  // A gate is checked from its minimum duration on.
  if (ph.gate && phase_start_ + ph.duration > last_now_)
    next = std::min(next, phase_start_ + ph.duration);
  for (int f = 0; f < static_cast<int>(faults_.size()); ++f) {
    if (!faults_[f].applied) next = std::min(next, FaultStart(f));
    if (faults_[f].applied && !faults_[f].reverted && FaultEnd(f))
      next = std::min(next, *FaultEnd(f));
  }
  return next;
}

}  // namespace fdrill

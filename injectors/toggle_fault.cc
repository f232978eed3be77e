#include "injectors/toggle_fault.h"

namespace fdrill {

std::vector<std::string> OffFault::Mechanism() const {
  return {"apply: " + JoinArgv(toggle_->Argv(false)), "revert: " + JoinArgv(toggle_->Argv(true))};
}

bool FlapSchedule::WantDown(Duration t) const {
  if (t < Duration::zero()) return false;
  int64_t cycle = t / period;
  if (cycle >= count) return false;
  return t - cycle * period < down;
}

std::optional<Duration> FlapSchedule::NextEdge(Duration t) const {
  if (t < Duration::zero()) return Duration::zero();
  const int64_t cycle = period.count() > 0 ? t / period : 0;
  if (cycle >= count) return std::nullopt;
  const Duration start = cycle * period;
  if (t < start + down) return start + down;     // this flap's up edge
  if (cycle + 1 < count) return start + period;  // the next flap's down edge
  return std::nullopt;
}

std::string FlapSchedule::Describe() const {
  return count == 1 ? "once" : std::to_string(count) + " times, every " + FormatDuration(period);
}

Status FlapSchedule::Check(const std::string& what) const {
  if (count > 1 && period <= down) {
    return InvalidArgument("params.period: must be longer than params.down (" +
                           FormatDuration(down) + ") so the " + what + " comes up between flaps");
  }
  return Status::Ok();
}

Result<FlapSchedule> ReadFlapSchedule(ParamReader& p) {
  auto down = p.Dur("down");
  if (!down.ok()) return down.status();
  auto count = p.Int("count", 1, 1, 1000);
  if (!count.ok()) return count.status();
  auto period = p.Dur("period", *down * 2);
  if (!period.ok()) return period.status();
  return FlapSchedule{*down, *count, *period};
}

Status FlapFault::Revert() {
  Status s = toggle_->Restore();
  if (s.ok()) on_ = true;
  return s;
}

std::vector<std::string> FlapFault::Mechanism() const {
  return {"apply: " + JoinArgv(toggle_->Argv(false)) + ", then after " +
              FormatDuration(schedule_.down) + ": " + JoinArgv(toggle_->Argv(true)) + " (" +
              schedule_.Describe() + ")",
          "revert: " + JoinArgv(toggle_->Argv(true))};
}

Status FlapFault::SetOn(bool on) {
  if (applied_once_ && on_ == on) return Status::Ok();
  if (auto s = toggle_->Set(on); !s.ok()) return s;
  applied_once_ = true;
  on_ = on;
  return Status::Ok();
}

}  // namespace fdrill

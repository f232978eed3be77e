// FakeClock: time moves only when a test calls Advance().
#pragma once

#include "common/core/clock.h"

namespace fdrill {

class FakeClock final : public Clock {
 public:
  TimePoint Now() const override { return now_; }
  int64_t WallNanos() const override { return wall_base_ + (now_ - TimePoint{}).count(); }
  void Advance(std::chrono::nanoseconds d) { now_ += d; }

 private:
  TimePoint now_{std::chrono::seconds(1000)};
  int64_t wall_base_ = 1'764'000'000'000'000'000;
};

}  // namespace fdrill

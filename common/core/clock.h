// Clock: the one door to time. Steady time drives timelines and leases; wall
// time (realtime, ns since the epoch) stamps records that cross machines.
// RealClock is thread-safe; FakeClock (tests/fakes) advances only when told.
#pragma once

#include <chrono>
#include <cstdint>

namespace fdrill {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  virtual int64_t WallNanos() const = 0;
};

class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  int64_t WallNanos() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace fdrill

// Recording fakes for the fabric's NodeSystem seam and a clock that moves
// only when SleepFor is called, so readiness and stop timeouts run instantly.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "fabric/node_system.h"

namespace fdrill {

// /proc/<pid>/cmdline text: the words, each NUL-terminated.
inline std::string ProcCmdline(std::initializer_list<std::string> words) {
  std::string out;
  for (const auto& w : words) out += w + std::string(1, '\0');
  return out;
}

class SteppingClock final : public Clock {
 public:
  TimePoint Now() const override { return now_; }
  int64_t WallNanos() const override { return now_.time_since_epoch().count(); }
  void Advance(Duration d) { now_ += std::chrono::duration_cast<TimePoint::duration>(d); }

 private:
  TimePoint now_{};
};

class FakeNodeSystem final : public NodeSystem {
 public:
  explicit FakeNodeSystem(SteppingClock* clock) : clock_(clock) {}

  std::vector<SpawnSpec> spawned;
  int next_pid = 1000;
  int fail_spawn_at = -1;  // index of the Spawn call that fails; -1 none
  bool connects = true;
  std::function<void()> on_sleep;                  // e.g. let an agent die
  std::function<void(const SpawnSpec&)> on_spawn;  // e.g. write its log
  std::map<std::string, std::string> appended;     // path -> the lines AppendLine added
  SysFs* files = nullptr;                          // where ReplaceFile writes, when set
  int replaced = 0;                                // ReplaceFile calls

  Result<int> Spawn(const SpawnSpec& spec) override {
    if (static_cast<int>(spawned.size()) == fail_spawn_at)
      return FailedPrecondition("exec: No such file");
    spawned.push_back(spec);
    if (on_spawn) on_spawn(spec);
    return next_pid++;
  }
  std::function<bool(const std::string& ip, int port)> connects_to;  // when set, not `connects`
  bool TcpConnects(const std::string& ip, int port, Duration) override {
    return connects_to ? connects_to(ip, port) : connects;
  }
  void SleepFor(Duration d) override {
    clock_->Advance(d);
    if (on_sleep) on_sleep();
  }
  Status AppendLine(const std::string& path, const std::string& line) override {
    appended[path] += line + "\n";
    return Status::Ok();
  }
  Status ReplaceFile(const std::string& path, const std::string& text) override {
    ++replaced;
    return files != nullptr ? files->Write(path, text) : Status::Ok();
  }

 private:
  SteppingClock* clock_;
};

}  // namespace fdrill

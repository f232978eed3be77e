// RunRecorder: writes a run directory as the drill goes (docs/reference/formats.md):
// events.jsonl and metrics.jsonl are appended and flushed line by line, so a
// drill that dies still leaves its timeline. `t` is seconds since the
// recorder was created, on the controller's steady clock. Thread-safe: the
// controller thread writes events, the io thread writes metrics.
#pragma once

#include <fstream>
#include <mutex>
#include <string>

#include "common/core/clock.h"
#include "common/core/result.h"
#include "common/wire/wire.h"

namespace fdrill {

class RunRecorder {
 public:
  // Creates dir (and parents); fails if it exists and is not empty.
  static Result<std::unique_ptr<RunRecorder>> Create(const std::string& dir, const Clock& clock);

  const std::string& dir() const { return dir_; }
  double Now() const;
  // A controller wall-clock time (ns since epoch) as events' `t`.
  double TimeOfWall(int64_t wall_ns) const {
    return static_cast<double>(wall_ns - start_wall_ns_) / 1e9;
  }
  // Appends {"t", "type", ...fields} to events.jsonl; returns t.
  double Event(const std::string& type, Json fields = Json::object());
  // Appends records (from one node) to metrics.jsonl with node and t, where
  // t maps the rank's wall_ns through the agent's clock offset.
  // Returns how many records were written.
  // `attempt` > 0 (a relaunched workload) and a tenant's `workload` name
  // are written into each record.
  size_t Metrics(const std::string& node, const Json& records, int64_t agent_offset_ns,
                 int attempt = 0, const std::string& workload = "");
  Status WriteFile(const std::string& name, const std::string& content);

 private:
  RunRecorder(std::string dir, const Clock& clock);
  std::string dir_;
  const Clock& clock_;
  Clock::TimePoint start_;
  int64_t start_wall_ns_;
  std::mutex mu_;
  std::ofstream events_;
  std::ofstream metrics_;
};

}  // namespace fdrill

// The per-iteration metrics record of fdrill-collective (docs/reference/formats.md,
// "Metrics record") and the file it goes to. One JSON object per line.
// Records are written in batches, off the timed path: on oversubscribed
// cores a write() and a JSON object per iteration cost the peers' timed
// collectives ~7 us an iteration (bench/collective_fidelity.sh). A batch
// goes out as one write() of whole lines once a record is appended
// kFlushEvery or more after the previous write (on the records' own
// monotonic clock, mono_ns), so a record waits at most kFlushEvery plus one
// iteration; Flush() and the destructor write the rest. An iteration that
// takes kFlushEvery or longer has its record written as soon as it ends.
// A MetricsWriter belongs to one rank's loop and is not thread-safe; the
// other functions are pure.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/core/result.h"
#include "workloads/path_template.h"

namespace fdrill {

struct IterationRecord {
  int rank = 0;
  int nranks = 0;
  std::string host;
  int64_t iter = 0;
  std::string_view op;
  std::string_view dtype;
  std::string_view redop;
  uint64_t bytes = 0;
  uint64_t count = 0;
  int64_t wall_ns = 0;
  int64_t mono_ns = 0;
  double time_ms = 0;  // the collective alone
  // Untimed: how long this rank waited in the line-up before the collective
  // (the stop agreement). A straggler's delay shows here on its peers.
  double wait_ms = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  uint64_t wrong = 0;
  // --train only (the keys are absent otherwise): the training step, and
  // whether this process resumed after an earlier one (formats.md).
  std::optional<int64_t> step;
  bool restarted = false;

  // Fills in one timed iteration: its number, clocks, time, and algbw /
  // busbw from `bytes` (set once per size) and the op's bus factor.
  void Stamp(int64_t iteration, int64_t wall, int64_t mono_end, double time_ns, double bus_factor,
             uint64_t wrong_elements);
};

// The record as one JSON object, keys in formats.md order, no newline.
// Numbers are written with std::to_chars (integers exactly, doubles in
// their shortest round-trip form), a non-finite double as null; strings
// that need escaping (the host name is the only one from outside) go
// through nlohmann::json, invalid UTF-8 replaced.
std::string ToJsonLine(const IterationRecord& record);
// The same line and a newline, appended to `out` (no allocation once `out`
// has room).
void AppendJsonLine(const IterationRecord& record, std::string* out);

class MetricsWriter {
 public:
  // 5 ms: a few hundred write()s a second at most, and a record's wait well
  // inside the controller's slack for records in flight (LiveMonitor).
  static constexpr int64_t kFlushEveryNs = 5'000'000;

  // Creates missing parent directories, then truncates `path`, or appends
  // to it (train mode: a resumed run continues the file of the one before).
  static Result<std::unique_ptr<MetricsWriter>> Open(const std::string& path, bool append = false);
  // Writes what is still waiting (errors are lost here: call Flush first).
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter&) = delete;
  MetricsWriter& operator=(const MetricsWriter&) = delete;

  // Adds one line to the batch; writes the batch when it is due (above).
  Status Append(const IterationRecord& record);
  // Writes every line still waiting.
  Status Flush();

  const std::string& path() const { return path_; }
  size_t waiting_bytes() const { return batch_.size(); }

 private:
  MetricsWriter(std::string path, int fd);

  std::string path_;
  int fd_;
  std::string batch_;
  bool wrote_ = false;
  int64_t last_write_ns_ = 0;  // mono_ns of the record that triggered the last write
};

}  // namespace fdrill

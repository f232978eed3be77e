// The per-iteration metrics record of fdrill-collective (docs/formats.md,
// "Metrics record") and the file it goes to. One JSON object per line; each
// line is flushed as soon as it is written, so an agent tailing the file
// never reads half a record. A MetricsWriter belongs to one rank's loop and
// is not thread-safe; the other functions are pure.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "harness/core/result.h"

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
std::string ToJsonLine(const IterationRecord& record);

// Replaces every "{rank}" with `rank`, "{tmpdir}" with `tmpdir` and
// "{host}" with `host` (the rank's gethostname()).
std::string ExpandPathTemplate(std::string_view path_template, int rank, std::string_view tmpdir,
                               std::string_view host);

// $TMPDIR when set and not empty, else "/tmp".
std::string TmpDirFromEnv();

// gethostname(), or "unknown" if it fails.
std::string HostName();

class MetricsWriter {
 public:
  // Creates missing parent directories, then truncates `path`, or appends
  // to it (train mode: a resumed run continues the file of the one before).
  static Result<std::unique_ptr<MetricsWriter>> Open(const std::string& path, bool append = false);
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter&) = delete;
  MetricsWriter& operator=(const MetricsWriter&) = delete;

  // Writes one line and flushes it to the kernel.
  Status Append(const IterationRecord& record);

  const std::string& path() const { return path_; }

 private:
  MetricsWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}

  std::string path_;
  std::FILE* file_;
};

}  // namespace fdrill

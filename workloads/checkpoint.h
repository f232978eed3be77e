// The files of --train (train.h) in --checkpoint-dir, read and written by
// rank 0 only:
//   checkpoint      the latest checkpoint: step, rank count, state, digest
//   checkpoint.tmp  a checkpoint being written; never read
//   progress        completed-step high-water mark and steps redone
// A checkpoint is whole or absent, never half-written: it is written to
// checkpoint.tmp, fsync'ed, renamed over checkpoint, and the directory is
// fsync'ed so the rename itself survives a crash. Reading verifies the
// format, the length and the digest, so a damaged file is an error, not a
// silent restart from step 0. The progress file is one fixed-length line
// overwritten in place after every step (one pwrite, no fsync: it has to
// survive a killed process, not a lost machine). Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/core/result.h"

namespace fdrill {

struct Checkpoint {
  int64_t step = 0;    // steps completed: the next step to run
  int64_t nranks = 0;  // the gradients depend on it; a resume must match
  std::vector<double> state;
};

// FNV-1a (64-bit) over the state's bytes (host order), and its 16-digit hex.
uint64_t StateDigest(std::span<const double> state);
std::string DigestHex(uint64_t digest);

// Creates `dir` if needed and proves it writable (creates and removes a
// probe file). Errors name --checkpoint-dir.
Status PrepareCheckpointDir(const std::string& dir);

Status WriteCheckpoint(const std::string& dir, const Checkpoint& checkpoint);

// nullopt when there is no checkpoint yet.
Result<std::optional<Checkpoint>> ReadCheckpoint(const std::string& dir);

struct Progress {
  int64_t completed = 0;  // the most steps any run in this directory completed
  int64_t redone = 0;     // steps run again after a restart, all runs together
};

class ProgressFile {
 public:
  // Opens (creating) dir/progress and reads what earlier runs left there.
  static Result<std::unique_ptr<ProgressFile>> Open(const std::string& dir);
  ~ProgressFile();
  ProgressFile(const ProgressFile&) = delete;
  ProgressFile& operator=(const ProgressFile&) = delete;

  const Progress& progress() const { return progress_; }

  // Step `step` (0-based) completed: it was redone if an earlier run had
  // already completed it. Writes the new line.
  Status StepCompleted(int64_t step);

 private:
  ProgressFile(std::string path, int fd, Progress progress)
      : path_(std::move(path)), fd_(fd), progress_(progress) {}

  std::string path_;
  int fd_;
  Progress progress_;
};

}  // namespace fdrill

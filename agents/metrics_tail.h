// MetricsTail: follows the JSON-lines files the local ranks write
// (fdrill-collective --jsonl DIR/rank-{rank}.jsonl) and returns whole new
// lines as they appear. A partial last line waits for its newline. Files that
// appear later are picked up. Not thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/wire/wire.h"

namespace fdrill {

class MetricsTail {
 public:
  void Watch(std::string dir) {
    dir_ = std::move(dir);
    files_.clear();
  }
  void Stop() { dir_.clear(); }
  bool watching() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  // New records since the last call, up to max_records.
  std::vector<Json> Poll(size_t max_records = 5000);

 private:
  struct FileState {
    uint64_t offset = 0;
    std::string partial;
  };
  std::string dir_;
  std::map<std::string, FileState> files_;
  std::string chunk_;  // the read buffer, kept between polls
};

}  // namespace fdrill

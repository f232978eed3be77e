// LineReader: the lines of a JSON-lines file of a run directory, plain or
// zstd-compressed (a name ending in ".zst", e.g. metrics.jsonl.zst), read a
// chunk at a time: a day-long burn-in's metrics.jsonl is gigabytes, and the
// report must not hold it whole (docs/performance.md, report benchmarks).
// The compressed form is decoded as a stream (ZSTD_decompressStream): any
// number of frames, as `zstd` and `cat a.zst b.zst` write them.
// Errors name the file: it cannot be opened or read, its zstd data cannot be
// decompressed (corrupt, or a window over zstd's default 2^27 limit: `zstd
// --long=28` and up on a big file), or it ends in the middle of a frame (a copy
// cut short). One reader per file; not thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "common/core/result.h"

namespace fdrill {

inline constexpr char kZstdSuffix[] = ".zst";

class LineReader {
 public:
  // NotFound "cannot open PATH" when it cannot be opened.
  static Result<std::unique_ptr<LineReader>> Open(const std::filesystem::path& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line, without its '\n', in *line (valid until the next call);
  // false after the last one. A last line without '\n' is a line.
  Result<bool> Next(std::string_view* line);
  // The 1-based number of the line Next returned last.
  int64_t number() const { return number_; }

  class Source;  // the file's bytes, as they are or decompressed (line_reader.cc)

 private:
  explicit LineReader(std::unique_ptr<Source> source);
  // Moves the unread tail to the front of buf_ and appends the next chunk;
  // false at the end of the file.
  Result<bool> Refill();

  std::unique_ptr<Source> source_;
  std::string buf_;
  size_t begin_ = 0;  // the unread part is buf_[begin_, end_)
  size_t end_ = 0;
  bool eof_ = false;
  int64_t number_ = 0;
};

}  // namespace fdrill

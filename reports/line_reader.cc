#include "reports/line_reader.h"

#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace fdrill {

namespace {

constexpr size_t kChunk = 1 << 20;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

}  // namespace

class LineReader::Source {
 public:
  virtual ~Source() = default;
  // Up to n bytes into out; 0 at the end of the file.
  virtual Result<size_t> Read(char* out, size_t n) = 0;
};

namespace {

class PlainSource : public LineReader::Source {
 public:
  PlainSource(File file, std::string path) : file_(std::move(file)), path_(std::move(path)) {}
  Result<size_t> Read(char* out, size_t n) override {
    const size_t got = std::fread(out, 1, n, file_.get());
    if (got == 0 && std::ferror(file_.get())) {
      return Unavailable(fmt::format("error reading {}", path_));
    }
    return got;
  }

 private:
  File file_;
  std::string path_;
};

// ZSTD_decompressStream over the file, a chunk of compressed bytes at a time.
class ZstdSource : public LineReader::Source {
 public:
  ZstdSource(File file, std::string path)
      : file_(std::move(file)),
        path_(std::move(path)),
        stream_(ZSTD_createDStream()),
        in_buf_(ZSTD_DStreamInSize()) {}
  ~ZstdSource() override { ZSTD_freeDStream(stream_); }

  Result<size_t> Read(char* out, size_t n) override {
    if (stream_ == nullptr) return Internal(fmt::format("{}: cannot create a zstd stream", path_));
    ZSTD_outBuffer o{out, n, 0};
    while (o.pos == 0) {
      if (in_.pos == in_.size) {
        const size_t got = std::fread(in_buf_.data(), 1, in_buf_.size(), file_.get());
        if (got == 0) {
          if (std::ferror(file_.get())) return Unavailable(fmt::format("error reading {}", path_));
          if (!any_input_) return InvalidArgument(fmt::format("{}: empty, not zstd data", path_));
          // 0 from ZSTD_decompressStream: the last frame was complete.
          if (frame_left_ != 0) {
            return InvalidArgument(
                fmt::format("{}: truncated: the zstd data ends inside a frame", path_));
          }
          return size_t{0};
        }
        any_input_ = true;
        in_ = {in_buf_.data(), got, 0};
      }
      frame_left_ = ZSTD_decompressStream(stream_, &o, &in_);
      if (ZSTD_isError(frame_left_)) {
        return InvalidArgument(
            fmt::format("{}: cannot decompress: {}", path_, ZSTD_getErrorName(frame_left_)));
      }
    }
    return o.pos;
  }

 private:
  File file_;
  std::string path_;
  ZSTD_DStream* stream_;
  std::vector<char> in_buf_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  size_t frame_left_ = 0;
  bool any_input_ = false;
};

}  // namespace

Result<std::unique_ptr<LineReader>> LineReader::Open(const std::filesystem::path& path) {
  File file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) return NotFound(fmt::format("cannot open {}", path.string()));
  std::unique_ptr<Source> source;
  if (path.string().ends_with(kZstdSuffix)) {
    source = std::make_unique<ZstdSource>(std::move(file), path.string());
  } else {
    source = std::make_unique<PlainSource>(std::move(file), path.string());
  }
  return std::unique_ptr<LineReader>(new LineReader(std::move(source)));
}

LineReader::LineReader(std::unique_ptr<Source> source)
    : source_(std::move(source)), buf_(kChunk, '\0') {}

LineReader::~LineReader() = default;

Result<bool> LineReader::Refill() {
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);  // a line longer than the buffer
  Result<size_t> got = source_->Read(buf_.data() + end_, buf_.size() - end_);
  if (!got.ok()) return got.status();
  end_ += *got;
  return *got > 0;
}

Result<bool> LineReader::Next(std::string_view* line) {
  size_t from = begin_;
  while (true) {
    const char* data = buf_.data();
    const void* newline = std::memchr(data + from, '\n', end_ - from);
    if (newline != nullptr) {
      const size_t at = static_cast<const char*>(newline) - data;
      *line = std::string_view(data + begin_, at - begin_);
      begin_ = at + 1;
      ++number_;
      return true;
    }
    if (eof_) {
      if (begin_ == end_) return false;
      *line = std::string_view(data + begin_, end_ - begin_);
      begin_ = end_;
      ++number_;
      return true;
    }
    const size_t scanned = end_ - begin_;
    Result<bool> more = Refill();
    if (!more.ok()) return more.status();
    if (!*more) eof_ = true;
    from = begin_ + scanned;
  }
}

}  // namespace fdrill

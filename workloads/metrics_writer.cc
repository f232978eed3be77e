// MetricsWriter (metrics.h): the batch of record lines and its write().
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "workloads/metrics.h"

namespace fdrill {

namespace {
// A batch this large goes out whatever the clock says (a burst of records
// with the same mono_ns must not grow without bound).
constexpr size_t kMaxBatchBytes = 1 << 20;
}  // namespace

Result<std::unique_ptr<MetricsWriter>> MetricsWriter::Open(const std::string& path, bool append) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec)
      return Unavailable("--jsonl " + path + ": cannot create " + parent.string() + ": " +
                         ec.message());
  }
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  const int fd = ::open(path.c_str(), flags, 0666);
  if (fd < 0) return Unavailable("--jsonl " + path + ": " + std::strerror(errno));
  return std::unique_ptr<MetricsWriter>(new MetricsWriter(path, fd));
}

MetricsWriter::MetricsWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {
  batch_.reserve(64 << 10);
}

MetricsWriter::~MetricsWriter() {
  (void)Flush();
  ::close(fd_);
}

Status MetricsWriter::Append(const IterationRecord& record) {
  AppendJsonLine(record, &batch_);
  if (wrote_ && record.mono_ns - last_write_ns_ < kFlushEveryNs && batch_.size() < kMaxBatchBytes)
    return Status::Ok();
  wrote_ = true;
  last_write_ns_ = record.mono_ns;
  return Flush();
}

Status MetricsWriter::Flush() {
  size_t done = 0;
  while (done < batch_.size()) {
    const ssize_t n = ::write(fd_, batch_.data() + done, batch_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      batch_.erase(0, done);
      return Unavailable("--jsonl " + path_ + ": write failed: " + std::strerror(error));
    }
    done += static_cast<size_t>(n);
  }
  batch_.clear();
  return Status::Ok();
}

}  // namespace fdrill

#include "agents/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/core/json.h"

namespace fdrill {

namespace {
Status Errno(const std::string& what, const std::string& path) {
  return FailedPrecondition(what + " " + path + ": " + strerror(errno));
}

Status FsyncDir(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  int fd = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("open", dir);
  int rc = fsync(fd);
  close(fd);
  return rc == 0 ? Status::Ok() : Errno("fsync", dir);
}

bool PwriteAll(int fd, const char* data, size_t size, size_t at) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The records: everything before the first zero byte. Reads a block at a
// time and stops there, so the zeros ahead (up to kMaxStep) are not read.
std::string ReadRecords(const std::string& path) {
  std::string text;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char block[4096];
  for (;;) {
    ssize_t n = read(fd, block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const char* zero = static_cast<const char*>(memchr(block, '\0', static_cast<size_t>(n)));
    text.append(block,
                zero != nullptr ? static_cast<size_t>(zero - block) : static_cast<size_t>(n));
    if (zero != nullptr) break;
  }
  close(fd);
  return text;
}

// The faults applied and not reverted in `records`, in apply order.
std::vector<std::pair<std::string, Json>> PendingIn(const std::string& records) {
  std::vector<std::pair<std::string, Json>> pending;
  std::istringstream in(records);
  std::string line;
  while (std::getline(in, line)) {
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;  // torn write
    std::string id = j.value("id", "");
    if (j.value("op", "") == "apply") {
      pending.emplace_back(id, j.value("record", Json::object()));
    } else if (j.value("op", "") == "revert") {
      std::erase_if(pending, [&](const auto& p) { return p.first == id; });
    }
  }
  return pending;
}
}  // namespace

Journal::~Journal() {
  if (fd_ >= 0) close(fd_);
}

Status Journal::Open() {
  if (fd_ >= 0) return Status::Ok();
  Status s = OpenOnce();
  if (!s.ok() && fd_ >= 0) {
    // Half open (a zero-fill that found the disk full): not open at all, so
    // the next call tries the whole of it again rather than writing
    // records into a file whose end it never found.
    close(fd_);
    fd_ = -1;
  }
  return s;
}

Status Journal::OpenOnce() {
  const bool existed = access(path_.c_str(), F_OK) == 0;
  fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) return Errno("open journal", path_);
  struct stat st {};
  if (fstat(fd_, &st) != 0) return Errno("stat journal", path_);
  size_ = static_cast<size_t>(st.st_size);
  // After the last complete line: a torn one (a crash mid-write) is zeroed,
  // so the next record does not run on from it.
  const std::string records = ReadRecords(path_);
  const size_t last = records.rfind('\n');
  end_ = last == std::string::npos ? 0 : last + 1;
  pending_ = PendingIn(records.substr(0, end_));
  if (auto s = Zero(end_, std::max(size_, end_ + Step())); !s.ok()) return s;
  if (fsync(fd_) != 0) return Errno("fsync journal", path_);  // the size, once
  return existed ? Status::Ok() : FsyncDir(path_);
}

Status Journal::Zero(size_t from, size_t to) {
  static const std::vector<char> zeros(kMaxStep, '\0');
  for (size_t at = from; at < to;) {
    const size_t n = std::min(to - at, zeros.size());
    if (!PwriteAll(fd_, zeros.data(), n, at)) return Errno("zero journal", path_);
    at += n;
  }
  if (to > size_) size_ = to;
  return fdatasync(fd_) == 0 ? Status::Ok() : Errno("fdatasync journal", path_);
}

Status Journal::Append(const Json& line) {
  if (auto s = Open(); !s.ok()) return s;
  const std::string text = DumpJson(line) + "\n";
  // Keep a zero after the last record, and room ahead, so a record never
  // grows the file.
  if (end_ + text.size() + 1 > size_) {
    if (auto s = Zero(size_, end_ + text.size() + Step()); !s.ok()) return s;
    if (fsync(fd_) != 0) return Errno("fsync journal", path_);
  }
  if (!PwriteAll(fd_, text.data(), text.size(), end_)) return Errno("write journal", path_);
  if (fdatasync(fd_) != 0) return Errno("fdatasync journal", path_);
  end_ += text.size();
  return Status::Ok();
}

size_t Journal::Step() const { return std::clamp(size_, kMinStep, kMaxStep); }

Status Journal::Record(const std::string& id, const Json& record) {
  if (auto s = Open(); !s.ok()) return s;
  if (auto s = Append({{"op", "apply"}, {"id", id}, {"record", record}}); !s.ok()) return s;
  pending_.emplace_back(id, record);
  return Status::Ok();
}

Status Journal::Clear(const std::string& id) {
  if (auto s = Open(); !s.ok()) return s;
  auto left = pending_;
  std::erase_if(left, [&](const auto& p) { return p.first == id; });
  if (!left.empty()) {
    if (auto s = Append({{"op", "revert"}, {"id", id}}); !s.ok()) return s;
  } else if (end_ > 0) {
    // Nothing left: zero the used part instead of writing the revert (one
    // sync either way). Zeroed from the front: a crash part-way leaves a zero
    // first, which reads as empty; a crash before it reads as before, and the
    // restarted agent reverts again (a revert is safe twice).
    if (auto s = Zero(0, end_); !s.ok()) return s;
    end_ = 0;
  }
  pending_ = std::move(left);
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, Json>>> Journal::Pending() const {
  return PendingIn(ReadRecords(path_));
}

}  // namespace fdrill

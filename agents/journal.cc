#include "agents/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

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
}  // namespace

Status Journal::Append(const Json& line) {
  bool existed = access(path_.c_str(), F_OK) == 0;
  int fd = open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("open journal", path_);
  std::string text = line.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return Errno("write journal", path_);
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    close(fd);
    return Errno("fsync journal", path_);
  }
  close(fd);
  return existed ? Status::Ok() : FsyncDir(path_);
}

Status Journal::Record(const std::string& id, const Json& record) {
  return Append({{"op", "apply"}, {"id", id}, {"record", record}});
}

Status Journal::Clear(const std::string& id) {
  if (auto s = Append({{"op", "revert"}, {"id", id}}); !s.ok()) return s;
  auto pending = Pending();
  if (pending.ok() && pending->empty()) {
    if (truncate(path_.c_str(), 0) != 0) return Errno("truncate journal", path_);
  }
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, Json>>> Journal::Pending() const {
  std::vector<std::pair<std::string, Json>> pending;
  std::ifstream in(path_);
  if (!in) return pending;  // no journal: nothing applied
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

}  // namespace fdrill

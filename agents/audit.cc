#include "agents/audit.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include <spdlog/spdlog.h>

#include "common/core/json.h"
#include "common/wire/protocol.h"
#include "common/wire/wire.h"

namespace fdrill {

namespace {

// `"key":value,` with value serialised as JSON in place; one nested past
// the wire's limit as a string that says so (JsonDepth does not recurse).
void AppendField(std::string& line, std::string_view key, const Json& value) {
  line += '"';
  line += key;
  line += "\":";
  if (JsonDepth(value, kMaxFrameDepth + 1) > kMaxFrameDepth) {
    line += "\"(nested deeper than " + std::to_string(kMaxFrameDepth) + "; not recorded)\"";
  } else {
    line += DumpJson(value);
  }
  line += ',';
}

}  // namespace

AuditLog::AuditLog(std::string path) : path_(std::move(path)) { (void)Open(); }

AuditLog::~AuditLog() {
  if (fd_ >= 0) close(fd_);
}

Status AuditLog::Open() {
  if (fd_ >= 0) return Status::Ok();
  fd_ = open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) return FailedPrecondition("open " + path_ + ": " + std::strerror(errno));
  return Status::Ok();
}

// The line is written field by field in the order a Json object keeps its
// keys (sorted), the request's own values serialised where they are rather
// than copied into a line object first: a fan-out writes one line per agent
// (the fake fleet, 10,000 of them a round: docs/performance.md, section 3).
Status AuditLog::Record(int64_t wall_ns, const std::string& peer, const std::string& subject,
                        const Json& request, const std::string& result) {
  std::string line = "{";
  auto from_request = [&](const char* key) {
    if (auto it = request.find(key); it != request.end()) AppendField(line, key, *it);
  };
  from_request(proto::key::kFaultId);
  from_request(proto::key::kFaults);  // check: which faults it covered, each as sent
  AppendField(line, "id", RequestId(request));
  from_request(proto::key::kKind);
  from_request(proto::key::kParams);
  AppendField(line, "peer", peer);
  AppendField(line, "result", result);
  AppendField(line, "subject", subject);
  AppendField(line, "type", RequestType(request));
  line += "\"wall_ns\":" + std::to_string(wall_ns) + "}\n";
  Status s = Open();
  if (s.ok()) {
    // O_APPEND: one write puts the whole line at the end, or fails whole
    // (ENOSPC, EROFS, EIO); a short write leaves a torn line a reader skips.
    const ssize_t n = write(fd_, line.data(), line.size());
    if (n != static_cast<ssize_t>(line.size())) {
      s = FailedPrecondition("write " + path_ + ": " +
                             (n < 0 ? std::strerror(errno) : std::string("short write")));
    }
  }
  if (!s.ok()) {
    ++dropped_;
    if (error_.empty())
      spdlog::error("audit log: {}; requests are handled but not recorded until it can be written",
                    s.message());
    error_ = s.message();
    return s;
  }
  if (!error_.empty()) {
    spdlog::warn("audit log: written again ({} line(s) lost while it could not be: {})", dropped_,
                 error_);
    error_.clear();
  }
  return Status::Ok();
}

}  // namespace fdrill

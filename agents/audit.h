// AuditLog: one JSON line per request an agent handles, appended to
// <state_dir>/audit.jsonl: when (wall clock), who (peer address and, with
// TLS, the client certificate's subject), what (request type, fault id,
// kind and params, or a check's list of faults), and the result. Lease renewals are not logged (one
// a second). Written before the reply is sent. Not thread-safe.
//
// Whatever a request holds, a line is written: strings that are not UTF-8
// become U+FFFD (DumpJson), and a value nested deeper than the wire allows
// (kMaxFrameDepth; a caller that bypasses the decoder, as tests and the
// fake fleet do) is written as a string saying so, never recursed into.
// A line that cannot be written (a full or read-only disk) is not silent:
// error() says why, the agent logs it once per failing streak and reports
// it in hello and /metrics, and each later Record tries again (the file is
// opened again if it could not be), so the log resumes once space returns.
#pragma once

#include <cstdint>
#include <string>

#include "common/wire/wire.h"

namespace fdrill {

class AuditLog {
 public:
  explicit AuditLog(std::string path);
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Ok, or why the line was not written (it is then lost: counted in dropped()).
  Status Record(int64_t wall_ns, const std::string& peer, const std::string& subject,
                const Json& request, const std::string& result);
  // "" while lines are written; else why the last one was not.
  const std::string& error() const { return error_; }
  uint64_t dropped() const { return dropped_; }

 private:
  Status Open();

  std::string path_;
  int fd_ = -1;
  std::string error_;
  uint64_t dropped_ = 0;
};

}  // namespace fdrill

// AuditLog: one JSON line per request an agent handles, appended to
// <state_dir>/audit.jsonl: when (wall clock), who (peer address and, with
// TLS, the client certificate's subject), what (request type, fault id,
// kind and params, or a check's list of faults), and the result. Lease renewals are not logged (one
// a second). Written and flushed before the reply is sent. Not thread-safe.
#pragma once

#include <fstream>
#include <string>

#include "harness/wire/wire.h"

namespace fdrill {

class AuditLog {
 public:
  explicit AuditLog(const std::string& path) : out_(path, std::ios::app) {}
  void Record(int64_t wall_ns, const std::string& peer, const std::string& subject,
              const Json& request, const std::string& result);

 private:
  std::ofstream out_;
};

}  // namespace fdrill

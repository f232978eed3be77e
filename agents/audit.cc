#include "agents/audit.h"

#include "harness/wire/protocol.h"
#include "harness/wire/wire.h"

namespace fdrill {

void AuditLog::Record(int64_t wall_ns, const std::string& peer, const std::string& subject,
                      const Json& request, const std::string& result) {
  if (!out_) return;
  Json line = {{"wall_ns", wall_ns},       {"peer", peer},
               {"subject", subject},       {"type", RequestType(request)},
               {"id", RequestId(request)}, {"result", result}};
  for (const char* key : {proto::key::kFaultId, proto::key::kKind, proto::key::kParams}) {
    if (request.contains(key)) line[key] = request[key];
  }
  // check: which faults it covered, each as sent.
  if (request.contains(proto::key::kFaults))
    line[proto::key::kFaults] = request[proto::key::kFaults];
  out_ << line.dump() << "\n";
  out_.flush();
}

}  // namespace fdrill

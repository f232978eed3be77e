#include "agents/audit.h"

#include <string_view>

#include "harness/wire/protocol.h"
#include "harness/wire/wire.h"

namespace fdrill {

namespace {

// `"key":value,` with value serialised as JSON in place.
void AppendField(std::string& line, std::string_view key, const Json& value) {
  line += '"';
  line += key;
  line += "\":";
  line += value.dump();
  line += ',';
}

}  // namespace

// The line is written field by field in the order a Json object keeps its
// keys (sorted), the request's own values serialised where they are rather
// than copied into a line object first: a fan-out writes one line per agent
// (the fake fleet, 10,000 of them a round: docs/performance.md, section 3).
void AuditLog::Record(int64_t wall_ns, const std::string& peer, const std::string& subject,
                      const Json& request, const std::string& result) {
  if (!out_) return;
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
  out_ << line;
  out_.flush();
}

}  // namespace fdrill

#include "agents/audit.h"

namespace fdrill {

void AuditLog::Record(int64_t wall_ns, const std::string& peer, const std::string& subject,
                      const Json& request, const std::string& result) {
  if (!out_) return;
  Json line = {{"wall_ns", wall_ns},
               {"peer", peer},
               {"subject", subject},
               {"type", request.value("type", "")},
               {"id", request.value("id", uint64_t{0})},
               {"result", result}};
  if (request.contains("fault_id")) line["fault_id"] = request["fault_id"];
  if (request.contains("kind")) line["kind"] = request["kind"];
  if (request.contains("params")) line["params"] = request["params"];
  out_ << line.dump() << "\n";
  out_.flush();
}

}  // namespace fdrill

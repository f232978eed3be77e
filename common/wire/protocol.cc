#include "common/wire/protocol.h"

namespace fdrill::proto {

namespace {
// A field present with another JSON type than `want`: "field "kind" has the
// wrong type: want a string, got number".
Status WrongType(const char* field, const char* want, const Json& got) {
  return InvalidArgument(std::string("field \"") + field + "\" has the wrong type: want " + want +
                         ", got " + got.type_name());
}
}  // namespace

Json FaultSpec::ToJson() const {
  Json j = {{key::kFaultId, fault_id}, {key::kKind, kind}, {key::kParams, params}};
  if (max_duration_ms != 0) j[key::kMaxDurationMs] = max_duration_ms;
  return j;
}

Result<FaultSpec> FaultSpec::FromJson(const Json& j) {
  if (!j.is_object())
    return InvalidArgument(std::string("a fault must be an object, got ") + j.type_name());
  FaultSpec f;
  for (auto [field, out] :
       {std::pair{key::kFaultId, &f.fault_id}, std::pair{key::kKind, &f.kind}}) {
    auto it = j.find(field);
    if (it == j.end()) return InvalidArgument(std::string("a fault needs a \"") + field + "\"");
    if (!it->is_string()) return WrongType(field, "a string", *it);
    *out = it->get<std::string>();
    if (out->empty()) return InvalidArgument(std::string("a fault's \"") + field + "\" is empty");
  }
  if (auto it = j.find(key::kParams); it != j.end()) {
    if (!it->is_object()) return WrongType(key::kParams, "an object", *it);
    f.params = *it;
  }
  if (auto it = j.find(key::kMaxDurationMs); it != j.end()) {
    if (!it->is_number_integer()) return WrongType(key::kMaxDurationMs, "an integer", *it);
    f.max_duration_ms = it->get<int64_t>();
    if (f.max_duration_ms < 0) {
      return InvalidArgument(std::string("fault ") + f.fault_id + ": \"" + key::kMaxDurationMs +
                             "\" must be >= 0 (0: no limit)");
    }
  }
  return f;
}

}  // namespace fdrill::proto

#include "injectors/params.h"

#include <algorithm>
#include <vector>

#include "harness/core/did_you_mean.h"

namespace fdrill {

namespace {
Status KeyError(const std::string& key, const std::string& what) {
  return InvalidArgument("params." + key + ": " + what);
}

// A string with a unit ("3s", "100mbit", "128K") read by one of units.h's
// parsers; `form` names it for the message ("duration string like 3s").
template <class T>
Result<T> UnitString(const Json& v, const std::string& key, const std::string& form,
                     Result<T> (*parse)(std::string_view)) {
  if (!v.is_string()) return KeyError(key, "must be a " + form);
  auto r = parse(v.get<std::string>());
  if (!r.ok()) return KeyError(key, r.status().message());
  return *r;
}
}  // namespace

const Json* ParamReader::Find(const std::string& key) {
  seen_.insert(key);
  if (!params_.is_object()) return nullptr;
  auto it = params_.find(key);
  return it == params_.end() ? nullptr : &*it;
}

Result<std::string> ParamReader::String(const std::string& key) {
  const Json* v = Find(key);
  if (!v) return KeyError(key, "required");
  if (!v->is_string() || v->get<std::string>().empty())
    return KeyError(key, "must be a non-empty string");
  return v->get<std::string>();
}

Result<std::string> ParamReader::String(const std::string& key, std::string def) {
  if (!Find(key)) return def;
  return String(key);
}

Result<Duration> ParamReader::Dur(const std::string& key) {
  const Json* v = Find(key);
  if (!v) return KeyError(key, "required (a duration like 3s or 500ms)");
  auto d = UnitString(*v, key, "duration string like 3s or 500ms", &ParseDuration);
  if (!d.ok()) return d;
  if (d->count() <= 0) return KeyError(key, "must be greater than zero");
  return *d;
}

Result<Duration> ParamReader::Dur(const std::string& key, Duration def) {
  if (!Find(key)) return def;
  return Dur(key);
}

Result<uint64_t> ParamReader::Rate(const std::string& key) {
  const Json* v = Find(key);
  if (!v) return KeyError(key, "required (a rate like 100mbit)");
  return UnitString(*v, key, "rate string like 100mbit", &ParseRateBitsPerSec);
}

Result<uint64_t> ParamReader::Size(const std::string& key, uint64_t def) {
  const Json* v = Find(key);
  if (!v) return def;
  return UnitString(*v, key, "size string like 128K", &ParseSizeBytes);
}

Result<int64_t> ParamReader::Int(const std::string& key, int64_t def, int64_t min, int64_t max) {
  const Json* v = Find(key);
  if (!v) return def;
  if (!v->is_number_integer()) return KeyError(key, "must be an integer");
  int64_t n = v->get<int64_t>();
  if (n < min || n > max) {
    return KeyError(key, "must be between " + std::to_string(min) + " and " + std::to_string(max));
  }
  return n;
}

Result<bool> ParamReader::Bool(const std::string& key, bool def) {
  const Json* v = Find(key);
  if (!v) return def;
  if (!v->is_boolean()) return KeyError(key, "must be true or false");
  return v->get<bool>();
}

Status ParamReader::Finish() const {
  if (params_.is_null()) return Status::Ok();
  if (!params_.is_object()) return InvalidArgument("params: must be a mapping of key: value");
  for (const auto& [key, _] : params_.items()) {
    if (seen_.count(key)) continue;
    std::string hint = DidYouMean(key, seen_);
    std::string accepted;
    for (const auto& s : seen_) accepted += (accepted.empty() ? "" : ", ") + s;
    return InvalidArgument("params." + key + ": unknown key" + (hint.empty() ? "" : "; " + hint) +
                           " (accepted: " + accepted + ")");
  }
  return Status::Ok();
}

}  // namespace fdrill

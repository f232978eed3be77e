#include "injectors/params.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "common/core/did_you_mean.h"
#include "common/core/json.h"

namespace fdrill {

namespace {
Status KeyError(const std::string& key, const std::string& what) {
  return InvalidArgument("params." + key + ": " + what);
}

// A string with a unit ("3s", "100mbit", "128K") read by one of units.h's
// parsers in RANGE; `form` names it for the message ("duration string like 3s").
template <class T, class R>
Result<T> UnitString(const Json& v, const std::string& key, const std::string& form,
                     Result<T> (*parse)(std::string_view, UnitRange<R>), UnitRange<R> range) {
  if (!v.is_string()) return KeyError(key, "must be a " + form);
  auto r = parse(v.get<std::string>(), range);
  if (!r.ok()) return KeyError(key, r.status().message());
  return *r;
}

// V as written when it is an integer too large for int64: the scenario's
// 99999999999999999999 arrives as a string of digits (yaml-cpp cannot read
// it as one), JSON's as an unsigned or a float.
std::optional<std::string> BeyondInt64(const Json& v) {
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}) return DumpJson(v);
  if (v.is_number_float() && std::fabs(v.get<double>()) > 9.2e18) return DumpJson(v);
  if (v.is_string() && IsIntegerBeyondInt64(v.get<std::string>())) return v.get<std::string>();
  return std::nullopt;
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

Result<Duration> ParamReader::Dur(const std::string& key, UnitRange<Duration> range) {
  const Json* v = Find(key);
  if (!v) return KeyError(key, "required (a duration like 3s or 500ms)");
  return UnitString(*v, key, "duration string like 3s or 500ms", &ParseDuration, range);
}

Result<Duration> ParamReader::Dur(const std::string& key, Duration def, UnitRange<Duration> range) {
  if (!Find(key)) return def;
  return Dur(key, range);
}

Result<uint64_t> ParamReader::Rate(const std::string& key) {
  const Json* v = Find(key);
  if (!v) return KeyError(key, "required (a rate like 100mbit)");
  return UnitString(*v, key, "rate string like 100mbit", &ParseRateBitsPerSec, kRates);
}

Result<uint64_t> ParamReader::Size(const std::string& key, uint64_t def,
                                   UnitRange<uint64_t> range) {
  const Json* v = Find(key);
  if (!v) return def;
  return UnitString(*v, key, "size string like 128K", &ParseSizeBytes, range);
}

Result<int64_t> ParamReader::Int(const std::string& key, int64_t def, int64_t min, int64_t max) {
  const Json* v = Find(key);
  if (!v) return def;
  if (auto big = BeyondInt64(*v)) return KeyError(key, IntOutOfRange(*big, min, max));
  if (!v->is_number_integer()) return KeyError(key, "must be an integer");
  int64_t n = v->get<int64_t>();
  if (n < min || n > max) return KeyError(key, IntOutOfRange(std::to_string(n), min, max));
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

#include "harness/scenario/yaml_reader.h"

#include <cmath>
#include <filesystem>

#include "harness/scenario/yaml_errors.h"

namespace fdrill {

std::string YamlReader::Resolve(const std::string& path) const {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(base_dir_) / p;
  return p.string();
}

Status YamlReader::Error(const YAML::Node& at, const std::string& what) const {
  return YamlError(file_, at, what);
}

Status YamlReader::CheckKeys(const YAML::Node& map, const std::string& section,
                             const std::set<std::string>& allowed) const {
  return CheckYamlKeys(file_, map, section, allowed);
}

Result<std::string> YamlReader::Str(const YAML::Node& n, const std::string& key) const {
  if (!n.IsScalar()) return Error(n, key + " must be a string");
  return n.as<std::string>();
}

Result<int64_t> YamlReader::Int(const YAML::Node& n, const std::string& key, int64_t min,
                                int64_t max) const {
  int64_t v = 0;
  if (n.IsScalar() && IsIntegerBeyondInt64(n.Scalar()))
    return Error(n, key + " " + IntOutOfRange(n.Scalar(), min, max));
  if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v)) {
    return Error(n, key + " must be an integer");
  }
  if (v < min || v > max) return Error(n, key + " " + IntOutOfRange(n.Scalar(), min, max));
  return v;
}

Result<bool> YamlReader::Bool(const YAML::Node& n, const std::string& key) const {
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
    return Error(n, key + " must be true or false");
  }
  return v;
}

Result<double> YamlReader::Number(const YAML::Node& n, const std::string& key) const {
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v)) {
    return Error(n, key + " must be a number");
  }
  return v;
}

Result<Duration> YamlReader::Dur(const YAML::Node& n, const std::string& key) const {
  if (!n.IsScalar()) return Error(n, key + " must be a duration like 15s");
  auto d = ParseDuration(n.as<std::string>(), kDurations);
  if (!d.ok()) {
    // 'duration "200h" is out of range: ...' reads best with the key's name.
    const std::string& why = d.status().message();
    const std::string kind = "duration \"";
    if (why.rfind(kind, 0) == 0) return Error(n, key + why.substr(kind.size() - 2));
    return Error(n, key + ": " + why);
  }
  return *d;
}

std::optional<Duration> YamlReader::Offset(const YAML::Node& n) const {
  if (!n.IsScalar()) return std::nullopt;
  auto d = ParseDuration(n.as<std::string>(), {Duration(0), kMaxDuration});
  if (!d.ok()) return std::nullopt;
  return *d;
}

Result<std::vector<std::string>> YamlReader::StrList(const YAML::Node& n,
                                                     const std::string& key) const {
  std::vector<std::string> out;
  if (n.IsScalar()) {
    out.push_back(n.as<std::string>());
    return out;
  }
  if (!n.IsSequence() || n.size() == 0) {
    return Error(n, key + " must be a name, a hostlist like n[1-3], or a list of them");
  }
  for (const auto& e : n) {
    auto v = Str(e, key);
    if (!v.ok()) return v.status();
    out.push_back(*v);
  }
  return out;
}

Json YamlReader::ToJson(const YAML::Node& n) const {
  if (n.IsMap()) {
    Json o = Json::object();
    // A non-scalar key cannot name a param; it is kept as an empty name,
    // which the injector's own params check refuses as an unknown key.
    for (const auto& kv : n) {
      o[kv.first.IsScalar() ? kv.first.as<std::string>() : ""] = ToJson(kv.second);
    }
    return o;
  }
  if (n.IsSequence()) {
    Json a = Json::array();
    for (const auto& e : n) a.push_back(ToJson(e));
    return a;
  }
  if (!n.IsScalar()) return nullptr;
  int64_t i = 0;
  bool b = false;
  if (n.Tag() != "!" && YAML::convert<int64_t>::decode(n, i)) return i;
  if (n.Tag() != "!" && YAML::convert<bool>::decode(n, b)) return b;
  return n.as<std::string>();
}

}  // namespace fdrill

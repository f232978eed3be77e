#include "harness/scenario/yaml_errors.h"

#include <string_view>

#include "common/core/did_you_mean.h"
#include "harness/scenario/yaml_duplicates.h"

namespace fdrill {

std::string JoinWords(const std::set<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

Result<YAML::Node> LoadYaml(const std::string& file, const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return InvalidArgument(file + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": not valid YAML: " + e.msg);
  }
  // A second document after `---` was read by nobody: refused, not ignored.
  // Found by its marker, a line `---` at column 0 after the first content
  // (a marker there ends any block scalar, so it cannot be text): yaml-cpp
  // 0.7's LoadAll never returned on an input scenario_fuzz made.
  bool content = false;
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = text.find('\n', at);
    const std::string_view line(text.data() + at,
                                (nl == std::string::npos ? text.size() : nl) - at);
    ++line_no;
    const bool marker = line.substr(0, 3) == "---" &&
                        (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
    if (marker && content) {
      return InvalidArgument(file + ":" + std::to_string(line_no) +
                             ":1: a second YAML document; a scenario file holds one (remove the "
                             "`---` and what follows, or put each drill in its own file)");
    }
    const size_t first = line.find_first_not_of(" \t\r");
    if (!marker && first != std::string_view::npos && line[first] != '#') content = true;
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  if (Status st = FindDuplicateKey(file, text); !st.ok()) return st;
  return root;
}

Status YamlError(const std::string& file, const YAML::Node& at, const std::string& what) {
  const auto m = at.Mark();
  std::string where = file;
  if (m.line >= 0) where += ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  return InvalidArgument(where + ": " + what);
}

Status CheckYamlKeys(const std::string& file, const YAML::Node& map, const std::string& section,
                     const std::set<std::string>& allowed) {
  if (!map.IsMap()) return YamlError(file, map, section + " must be a mapping");
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) {
      return YamlError(file, kv.first,
                       "a key in " + section + " must be a plain word, not a mapping or list");
    }
    const std::string key = kv.first.as<std::string>();
    if (allowed.count(key)) continue;
    const std::string hint = DidYouMean(key, allowed);
    return YamlError(file, kv.first,
                     "unknown key \"" + key + "\" in " + section +
                         (hint.empty() ? "" : "; " + hint) + " (allowed: " + JoinWords(allowed) +
                         ")");
  }
  return Status::Ok();
}

}  // namespace fdrill

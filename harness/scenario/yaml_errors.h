// What the scenario loader and the topology loader say about a YAML file
// they refuse: "FILE:LINE:COL: what", and unknown keys with "did you mean".
// One wording for both, so an operator reads every file's errors alike.
#pragma once

#include <set>
#include <string>

#include <yaml-cpp/yaml.h>

#include "common/core/result.h"

namespace fdrill {

// "a, b, c" in set order.
std::string JoinWords(const std::set<std::string>& words);

// TEXT parsed as YAML; a syntax error reads "FILE:LINE:COL: not valid YAML: ...",
// a key a mapping names twice "FILE:LINE:COL: duplicate key "KEY" (first at
// line N)" (yaml_duplicates.h).
Result<YAML::Node> LoadYaml(const std::string& file, const std::string& text);

// `what` at AT's place in FILE (the file name alone when the node has none).
Status YamlError(const std::string& file, const YAML::Node& at, const std::string& what);

// MAP is a mapping whose keys are all in `allowed`; else the first stranger,
// with a did-you-mean hint and the allowed keys.
Status CheckYamlKeys(const std::string& file, const YAML::Node& map, const std::string& section,
                     const std::set<std::string>& allowed);

}  // namespace fdrill

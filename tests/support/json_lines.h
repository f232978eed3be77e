// Reading back a JSON-lines file (metrics, events, the audit log): one
// object per line, in file order. An absent file reads as no lines; a line
// that is not JSON throws (nlohmann's parse_error), which fails the test.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fdrill {

inline std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace fdrill

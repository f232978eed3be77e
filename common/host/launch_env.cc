#include "common/host/launch_env.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

namespace fdrill {

std::string LaunchEnvDir(const std::string& tmpdir) { return tmpdir + "/fdrill-launch-env"; }

bool IsNcclEnvName(const std::string& name) {
  if (name.rfind("NCCL_", 0) != 0 || name.size() == 5) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string FormatLaunchEnv(const std::map<std::string, std::string>& env) {
  std::string out;
  for (const auto& [name, value] : env) out += name + "=" + value + "\n";
  return out;
}

Result<std::map<std::string, std::string>> ReadLaunchEnv(const std::string& dir) {
  std::map<std::string, std::string> env;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return env;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".env") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path);
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      if (line.empty()) continue;
      auto eq = line.find('=');
      std::string name = line.substr(0, eq);
      if (eq == std::string::npos || !IsNcclEnvName(name) || line.find('\0') != std::string::npos) {
        return InvalidArgument(path.string() + ":" + std::to_string(line_no) +
                               ": expected NCCL_NAME=VALUE");
      }
      env[name] = line.substr(eq + 1);
    }
  }
  return env;
}

}  // namespace fdrill

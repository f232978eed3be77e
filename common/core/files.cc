#include "common/core/files.h"

#include <fstream>

#include <fmt/format.h>

namespace fdrill {

Result<std::string> ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(fmt::format("cannot open {}", path.string()));
  std::string text;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec) text.reserve(static_cast<size_t>(size));
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Unavailable(fmt::format("error reading {}", path.string()));
  return text;
}

Status WriteFileAtomically(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path partial = path;
  partial += ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return Unavailable(fmt::format("cannot write {}", partial.string()));
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) {
    return Unavailable(
        fmt::format("cannot rename {} to {}: {}", partial.string(), path.string(), ec.message()));
  }
  return Status::Ok();
}

Status CheckPathComponent(std::string_view name) {
  const std::string quoted = "\"" + std::string(name.substr(0, 120)) + "\"";
  if (name.empty()) return InvalidArgument("must not be empty");
  if (name.size() > 100) return InvalidArgument(quoted + " is longer than 100 characters");
  if (name.find('/') != std::string_view::npos || name.find('\\') != std::string_view::npos)
    return InvalidArgument(quoted + " holds a path separator; it names one directory");
  if (name.find("..") != std::string_view::npos)
    return InvalidArgument(quoted + " holds \"..\"; it names one directory");
  if (name.front() == '.' || name.front() == '-')
    return InvalidArgument(quoted + " starts with '" + std::string(1, name.front()) +
                           "'; start it with a letter or a digit");
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-' || c == '+' ||
                    static_cast<unsigned char>(c) >= 0x80;  // UTF-8 letters (the loader checks it)
    if (!ok) {
      return InvalidArgument(quoted + " holds '" + std::string(1, c) +
                             "'; use letters, digits, '.', '_', '-' and '+'");
    }
  }
  return Status::Ok();
}

}  // namespace fdrill

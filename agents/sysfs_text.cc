#include "agents/sysfs_text.h"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace fdrill {

std::string TrimSpace(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::optional<std::string> ReadSysText(SysFs& sysfs, const std::string& path) {
  auto r = sysfs.Read(path);
  if (!r.ok()) return std::nullopt;
  std::string t = TrimSpace(*r);
  if (t.empty()) return std::nullopt;
  return t;
}

std::optional<int64_t> ParseSysInt(const std::string& text, int base) {
  std::string_view v = text;
  if (base == 16 && v.rfind("0x", 0) == 0) v.remove_prefix(2);
  if (v.empty()) return std::nullopt;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n, base);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return n;
}

std::optional<int64_t> ReadSysInt(SysFs& sysfs, const std::string& path, int base) {
  auto t = ReadSysText(sysfs, path);
  return t ? ParseSysInt(*t, base) : std::nullopt;
}

Result<std::vector<std::string>> ListOrNone(SysFs& sysfs, const std::string& dir) {
  auto names = sysfs.List(dir);
  if (!names.ok() && names.status().code() == StatusCode::kNotFound)
    return std::vector<std::string>{};
  return names;
}

std::vector<std::pair<int64_t, std::string>> NumberedEntries(const std::vector<std::string>& names,
                                                             const std::string& prefix) {
  std::vector<std::pair<int64_t, std::string>> out;
  for (const auto& n : names) {
    if (n.rfind(prefix, 0) != 0) continue;
    if (auto i = ParseSysInt(n.substr(prefix.size()))) out.emplace_back(*i, n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace fdrill

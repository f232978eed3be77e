#include "workloads/libraries.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fdrill {

namespace {

std::string_view NextLine(std::string_view& text) {
  const size_t nl = text.find('\n');
  std::string_view line = text.substr(0, nl);
  text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  return line;
}

std::string OneLine(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

std::string MappedFile(std::string_view maps, std::string_view soname) {
  while (!maps.empty()) {
    std::string_view line = NextLine(maps);
    // address perms offset dev inode pathname: the path is the first '/'.
    const size_t slash = line.find('/');
    if (slash == std::string_view::npos) continue;
    std::string_view path = line.substr(slash);
    if (path.ends_with(" (deleted)")) path.remove_suffix(10);
    const size_t base = path.rfind('/');
    if (path.substr(base + 1).starts_with(soname)) return std::string(path);
  }
  return "";
}

std::string LoadedFrom(std::string_view soname) {
  std::ifstream in("/proc/self/maps");
  const std::string maps((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return MappedFile(maps, soname);
}

std::string NcclVersionText(int code) {
  const bool modern = code >= 20900;  // NCCL_VERSION(2,9,0) in the 10000s scheme
  const int major = modern ? code / 10000 : code / 1000;
  const int minor = modern ? (code % 10000) / 100 : (code % 1000) / 100;
  return fmt::format("NCCL {}.{}.{}", major, minor, code % 100);
}

std::string CudaRuntimeVersionText(int code) {
  return fmt::format("CUDA runtime {}.{}", code / 1000, (code % 1000) / 10);
}

std::string LibraryValue(std::string_view version, std::string_view path) {
  std::string v = OneLine(version);
  if (!path.empty()) v += (v.empty() ? "(" : " (") + OneLine(path) + ")";
  return v;
}

std::string EncodeRankLibraries(std::string_view host, const std::vector<LoadedLibrary>& libs) {
  std::string out = OneLine(host) + "\n";
  for (const LoadedLibrary& lib : libs) out += OneLine(lib.key) + "\t" + OneLine(lib.value) + "\n";
  return out;
}

std::string FormatLoadedLines(const std::vector<std::string>& ranks) {
  // key -> value -> hosts, each in order of first appearance.
  std::vector<std::string> keys;
  std::map<std::string, std::vector<std::pair<std::string, std::vector<std::string>>>> by_key;
  for (std::string_view text : ranks) {
    const std::string host(NextLine(text));
    if (host.empty()) continue;
    while (!text.empty()) {
      std::string_view line = NextLine(text);
      const size_t tab = line.find('\t');
      if (tab == std::string_view::npos) continue;
      const std::string key(line.substr(0, tab));
      const std::string value(line.substr(tab + 1));
      auto [it, inserted] = by_key.try_emplace(key);
      if (inserted) keys.push_back(key);
      auto& values = it->second;
      auto v = values.begin();
      while (v != values.end() && v->first != value) ++v;
      if (v == values.end()) v = values.insert(values.end(), {value, {}});
      if (std::find(v->second.begin(), v->second.end(), host) == v->second.end())
        v->second.push_back(host);
    }
  }
  std::string out;
  for (const std::string& key : keys) {
    for (const auto& [value, hosts] : by_key[key])
      out += fmt::format("# loaded {} on {}: {}\n", key, fmt::join(hosts, ", "), value);
  }
  return out;
}

}  // namespace fdrill

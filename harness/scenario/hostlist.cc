#include "harness/scenario/hostlist.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

namespace fdrill {

namespace {

Status Bad(const std::string& expr, const std::string& what, size_t pos) {
  return InvalidArgument(expr + ": " + what + " (character " + std::to_string(pos + 1) + ")");
}

bool IsDigits(const std::string& s) {
  if (s.empty() || s.size() > 9) return false;  // 9 digits fit in int64 comfortably
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// "01-03,07" (the inside of one bracket, starting at expr[at]) -> "01","02","03","07".
Result<std::vector<std::string>> ExpandRanges(const std::string& expr, const std::string& inside,
                                              size_t at) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= inside.size()) {
    size_t comma = inside.find(',', start);
    if (comma == std::string::npos) comma = inside.size();
    const std::string item = inside.substr(start, comma - start);
    const size_t pos = at + start;
    const size_t dash = item.find('-');
    const std::string lo = dash == std::string::npos ? item : item.substr(0, dash);
    const std::string hi = dash == std::string::npos ? item : item.substr(dash + 1);
    if (!IsDigits(lo) || !IsDigits(hi)) {
      return Bad(expr, "\"" + item + "\" is not a number or a range like 01-16", pos);
    }
    const long a = std::stol(lo), b = std::stol(hi);
    if (b < a) return Bad(expr, "range " + item + " runs backwards", pos);
    if (static_cast<size_t>(b - a) >= kMaxHostlistHosts) {
      return Bad(
          expr,
          "range " + item + " names more than " + std::to_string(kMaxHostlistHosts) + " hosts",
          pos);
    }
    for (long v = a; v <= b; ++v) {
      std::string digits = std::to_string(v);
      if (digits.size() < lo.size()) digits.insert(0, lo.size() - digits.size(), '0');
      out.push_back(std::move(digits));
      if (out.size() > kMaxHostlistHosts) {
        return Bad(expr, "names more than " + std::to_string(kMaxHostlistHosts) + " hosts", at);
      }
    }
    start = comma + 1;
  }
  return out;
}

// One comma-free (outside brackets) expression, starting at expr[at].
Status ExpandOne(const std::string& expr, const std::string& part, size_t at,
                 std::vector<std::string>* out) {
  if (part.empty()) return Bad(expr, "an empty host name", at);
  std::vector<std::string> names{""};
  size_t i = 0;
  while (i < part.size()) {
    const char c = part[i];
    if (c == ']') return Bad(expr, "\"]\" without its \"[\"", at + i);
    if (c == '[') {
      const size_t close = part.find(']', i);
      if (close == std::string::npos) return Bad(expr, "\"[\" is never closed", at + i);
      if (part.find('[', i + 1) < close)
        return Bad(expr, "brackets cannot nest", at + part.find('[', i + 1));
      auto values = ExpandRanges(expr, part.substr(i + 1, close - i - 1), at + i + 1);
      if (!values.ok()) return values.status();
      std::vector<std::string> next;
      if (names.size() * values->size() > kMaxHostlistHosts) {
        return Bad(expr, "names more than " + std::to_string(kMaxHostlistHosts) + " hosts", at + i);
      }
      for (const auto& prefix : names) {
        for (const auto& v : *values) next.push_back(prefix + v);
      }
      names = std::move(next);
      i = close + 1;
      continue;
    }
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return Bad(expr, std::string("\"") + c + "\" cannot be part of a host name", at + i);
    for (auto& n : names) n += c;
    ++i;
  }
  for (auto& n : names) out->push_back(std::move(n));
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> ExpandHostlist(const std::string& expr) {
  std::vector<std::string> out;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= expr.size(); ++i) {
    if (i < expr.size() && expr[i] == '[') ++depth;
    if (i < expr.size() && expr[i] == ']') --depth;
    if (i == expr.size() || (expr[i] == ',' && depth == 0)) {
      if (auto st = ExpandOne(expr, expr.substr(start, i - start), start, &out); !st.ok())
        return st;
      if (out.size() > kMaxHostlistHosts) {
        return Bad(expr, "names more than " + std::to_string(kMaxHostlistHosts) + " hosts", start);
      }
      start = i + 1;
    }
  }
  std::set<std::string> seen;
  for (const auto& n : out) {
    if (!seen.insert(n).second) return InvalidArgument(expr + ": names " + n + " twice");
  }
  return out;
}

Result<std::vector<std::string>> ReadHostsFile(const std::string& path) {
  // A regular file of sane size only: /dev/zero or a FIFO would never end.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return NotFound("cannot open the hosts file " + path + " (not a regular file)");
  if (std::filesystem::file_size(path, ec) > (16u << 20))
    return InvalidArgument("the hosts file " + path + " is over 16 MiB");
  std::ifstream in(path);
  if (!in) return NotFound("cannot open the hosts file " + path);
  std::vector<std::string> hosts;
  std::set<std::string> seen;
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    line = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
    const std::string where = path + ":" + std::to_string(no) + ": ";
    auto names = ExpandHostlist(line);
    if (!names.ok()) return InvalidArgument(where + names.status().message());
    for (auto& h : *names) {
      if (!seen.insert(h).second) return InvalidArgument(where + "host " + h + " is listed twice");
      hosts.push_back(std::move(h));
    }
  }
  if (hosts.empty()) return InvalidArgument("the hosts file " + path + " names no host");
  return hosts;
}

Result<std::vector<std::string>> SlurmJobNodes(std::string* expr) {
  const char* list = std::getenv("SLURM_JOB_NODELIST");
  if (list == nullptr || *list == '\0') return NotFound("SLURM_JOB_NODELIST is not set");
  *expr = list;
  auto hosts = ExpandHostlist(*expr);
  if (!hosts.ok())
    return InvalidArgument("SLURM_JOB_NODELIST=" + *expr + ": " + hosts.status().message());
  return hosts;
}

}  // namespace fdrill

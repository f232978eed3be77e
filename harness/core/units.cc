#include "harness/core/units.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace fdrill {

namespace {

// Splits "12.5mbit" into 12.5 and "mbit". Fails on an empty number.
bool SplitNumber(std::string_view text, double* number, std::string* unit) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0) return false;
  std::string num(text.substr(0, i));
  char* end = nullptr;
  *number = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size()) return false;
  unit->clear();
  for (char c : text.substr(i)) {
    if (c == ' ') continue;
    unit->push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return true;
}

std::string Quote(std::string_view text) { return "\"" + std::string(text) + "\""; }

}  // namespace

Result<Duration> ParseDuration(std::string_view text) {
  double n = 0;
  std::string unit;
  if (!SplitNumber(text, &n, &unit)) {
    return InvalidArgument("bad duration " + Quote(text) +
                           ": expected a number and a unit, like 15s or 500ms");
  }
  double ns_per_unit = 0;
  if (unit == "ns")
    ns_per_unit = 1;
  else if (unit == "us")
    ns_per_unit = 1e3;
  else if (unit == "ms")
    ns_per_unit = 1e6;
  else if (unit == "s")
    ns_per_unit = 1e9;
  else if (unit == "m" || unit == "min")
    ns_per_unit = 60e9;
  else if (unit == "h")
    ns_per_unit = 3600e9;
  else if (unit.empty()) {
    return InvalidArgument("duration " + Quote(text) + " has no unit: write " + std::string(text) +
                           "s or " + std::string(text) + "ms");
  } else {
    return InvalidArgument("bad duration unit in " + Quote(text) + ": use ns, us, ms, s, m or h");
  }
  return Duration(static_cast<int64_t>(std::llround(n * ns_per_unit)));
}

Result<uint64_t> ParseRateBitsPerSec(std::string_view text) {
  double n = 0;
  std::string unit;
  if (!SplitNumber(text, &n, &unit)) {
    return InvalidArgument("bad rate " + Quote(text) +
                           ": expected a number and a unit, like 100mbit");
  }
  double mult = 0;
  if (unit == "bit")
    mult = 1;
  else if (unit == "kbit")
    mult = 1e3;
  else if (unit == "mbit")
    mult = 1e6;
  else if (unit == "gbit")
    mult = 1e9;
  else if (unit == "tbit")
    mult = 1e12;
  else if (unit == "bps" || unit == "kbps" || unit == "mbps" || unit == "gbps") {
    // tc reads "mbps" as megaBYTES per second; operators usually mean bits.
    std::string suggestion = std::string(text.substr(0, text.size() - unit.size())) +
                             unit.substr(0, unit.size() - 3) + "bit";
    return InvalidArgument("ambiguous rate unit in " + Quote(text) +
                           ": fdrill takes bits per second, did you mean " + Quote(suggestion) +
                           "?");
  } else if (unit.empty()) {
    return InvalidArgument("rate " + Quote(text) + " has no unit: write " + std::string(text) +
                           "mbit");
  } else {
    return InvalidArgument("bad rate unit in " + Quote(text) +
                           ": use bit, kbit, mbit or gbit (bits per second)");
  }
  double bits = n * mult;
  if (bits < 8000)
    return InvalidArgument("rate " + Quote(text) + " is below 8kbit, which tbf cannot shape");
  return static_cast<uint64_t>(std::llround(bits));
}

Result<uint64_t> ParseSizeBytes(std::string_view text) {
  double n = 0;
  std::string unit;
  if (!SplitNumber(text, &n, &unit)) {
    return InvalidArgument("bad size " + Quote(text) +
                           ": expected a number and an optional unit, like 4M or 512K");
  }
  double mult = 0;
  if (unit.empty() || unit == "b")
    mult = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    mult = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    mult = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    mult = 1024.0 * 1024 * 1024;
  else
    return InvalidArgument("bad size unit in " + Quote(text) +
                           ": use B, K, M or G (binary multiples)");
  return static_cast<uint64_t>(std::llround(n * mult));
}

std::string FormatDuration(Duration d) {
  int64_t ns = d.count();
  if (ns % 1000000000 == 0) return std::to_string(ns / 1000000000) + "s";
  if (ns % 1000000 == 0) return std::to_string(ns / 1000000) + "ms";
  if (ns % 1000 == 0) return std::to_string(ns / 1000) + "us";
  return std::to_string(ns) + "ns";
}

std::string FormatRate(uint64_t bps) {
  if (bps % 1000000000 == 0) return std::to_string(bps / 1000000000) + "gbit";
  if (bps % 1000000 == 0) return std::to_string(bps / 1000000) + "mbit";
  if (bps % 1000 == 0) return std::to_string(bps / 1000) + "kbit";
  return std::to_string(bps) + "bit";
}

std::string FormatSize(uint64_t bytes) {
  constexpr uint64_t kG = 1024ull * 1024 * 1024, kM = 1024ull * 1024, kK = 1024;
  if (bytes >= kG && bytes % kG == 0) return std::to_string(bytes / kG) + "GiB";
  if (bytes >= kM && bytes % kM == 0) return std::to_string(bytes / kM) + "MiB";
  if (bytes >= kK && bytes % kK == 0) return std::to_string(bytes / kK) + "KiB";
  return std::to_string(bytes) + "B";
}

double ToSeconds(Duration d) { return static_cast<double>(d.count()) / 1e9; }

}  // namespace fdrill

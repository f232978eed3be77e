#include "harness/core/units.h"

#include <algorithm>
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

// A unit's spelling (lower case, as SplitNumber leaves it) and how many
// base units (ns, bits per second, bytes) one of it is.
struct Unit {
  std::string_view name;
  double scale;
};

constexpr Unit kDurationUnits[] = {{"ns", 1},   {"us", 1e3},   {"ms", 1e6},  {"s", 1e9},
                                   {"m", 60e9}, {"min", 60e9}, {"h", 3600e9}};
constexpr Unit kRateUnits[] = {
    {"bit", 1}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}, {"tbit", 1e12}};
constexpr double kKi = 1024.0, kMi = 1024.0 * kKi, kGi = 1024.0 * kMi;
constexpr Unit kSizeUnits[] = {{"", 1},      {"b", 1},    {"k", kKi},  {"kb", kKi},
                               {"kib", kKi}, {"m", kMi},  {"mb", kMi}, {"mib", kMi},
                               {"g", kGi},   {"gb", kGi}, {"gib", kGi}};

// TEXT split into its number and unit, with the unit's scale in UNITS (0:
// not one of them, which the caller explains). TEXT without a number is
// "bad WHAT TEXT: expected EXPECTED".
struct Quantity {
  double number = 0;
  std::string unit;
  double scale = 0;
};

template <size_t N>
Result<Quantity> SplitQuantity(std::string_view text, const Unit (&units)[N], const char* what,
                               const char* expected) {
  Quantity q;
  if (!SplitNumber(text, &q.number, &q.unit))
    return InvalidArgument("bad " + std::string(what) + " " + Quote(text) + ": expected " +
                           expected);
  for (const Unit& u : units) {
    if (u.name == q.unit) q.scale = u.scale;
  }
  return q;
}

}  // namespace

Result<Duration> ParseDuration(std::string_view text) {
  auto q =
      SplitQuantity(text, kDurationUnits, "duration", "a number and a unit, like 15s or 500ms");
  if (!q.ok()) return q.status();
  if (q->scale == 0) {
    if (q->unit.empty()) {
      return InvalidArgument("duration " + Quote(text) + " has no unit: write " +
                             std::string(text) + "s or " + std::string(text) + "ms");
    }
    return InvalidArgument("bad duration unit in " + Quote(text) + ": use ns, us, ms, s, m or h");
  }
  return Duration(static_cast<int64_t>(std::llround(q->number * q->scale)));
}

Result<uint64_t> ParseRateBitsPerSec(std::string_view text) {
  auto q = SplitQuantity(text, kRateUnits, "rate", "a number and a unit, like 100mbit");
  if (!q.ok()) return q.status();
  const std::string& unit = q->unit;
  if (q->scale == 0) {
    if (unit == "bps" || unit == "kbps" || unit == "mbps" || unit == "gbps") {
      // tc reads "mbps" as megaBYTES per second; operators usually mean bits.
      std::string suggestion = std::string(text.substr(0, text.size() - unit.size())) +
                               unit.substr(0, unit.size() - 3) + "bit";
      return InvalidArgument("ambiguous rate unit in " + Quote(text) +
                             ": fdrill takes bits per second, did you mean " + Quote(suggestion) +
                             "?");
    }
    if (unit.empty()) {
      return InvalidArgument("rate " + Quote(text) + " has no unit: write " + std::string(text) +
                             "mbit");
    }
    return InvalidArgument("bad rate unit in " + Quote(text) +
                           ": use bit, kbit, mbit or gbit (bits per second)");
  }
  const double bits = q->number * q->scale;
  if (bits < 8000)
    return InvalidArgument("rate " + Quote(text) + " is below 8kbit, which tbf cannot shape");
  return static_cast<uint64_t>(std::llround(bits));
}

Result<uint64_t> ParseSizeBytes(std::string_view text) {
  auto q =
      SplitQuantity(text, kSizeUnits, "size", "a number and an optional unit, like 4M or 512K");
  if (!q.ok()) return q.status();
  if (q->scale == 0)
    return InvalidArgument("bad size unit in " + Quote(text) +
                           ": use B, K, M or G (binary multiples)");
  return static_cast<uint64_t>(std::llround(q->number * q->scale));
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

uint64_t DefaultTbfBurstBytes(uint64_t bits_per_sec) {
  return std::max<uint64_t>(128 * 1024, bits_per_sec / 8 / 100);
}

}  // namespace fdrill

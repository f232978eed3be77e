#include "common/core/units.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <ctime>
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

// The shortest exact spelling of N base units among UNITS (largest first
// wins), for the ends of a range: 168h rather than 604800s.
template <size_t N>
std::string Shortest(double n, const Unit (&units)[N]) {
  const Unit* best = &units[0];
  for (const Unit& u : units) {
    if (u.name.empty() || u.name == "min") continue;  // a size's bare number; "m" says it
    if (u.scale <= n && std::fmod(n, u.scale) == 0 && u.scale > best->scale) best = &u;
  }
  return std::to_string(static_cast<uint64_t>(n / best->scale)) + std::string(best->name);
}

Status OutOfRange(const char* kind, std::string_view text, const std::string& range) {
  return InvalidArgument(std::string(kind) + " " + Quote(text) + " is out of range: accepted " +
                         range);
}

}  // namespace

std::string IntOutOfRange(std::string_view value, int64_t min, int64_t max) {
  return std::string(value) + " is out of range: accepted " + std::to_string(min) + ".." +
         std::to_string(max);
}

bool IsIntegerBeyondInt64(std::string_view text) {
  std::string_view digits = text.substr(!text.empty() && text[0] == '-' ? 1 : 0);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return false;
  int64_t n = 0;
  return std::from_chars(text.data(), text.data() + text.size(), n).ec ==
         std::errc::result_out_of_range;
}

std::string FormatDurationRange(UnitRange<Duration> range) {
  return (range.lo.count() == 0 ? std::string("0s")
                                : Shortest(static_cast<double>(range.lo.count()), kDurationUnits)) +
         ".." + Shortest(static_cast<double>(range.hi.count()), kDurationUnits);
}

std::string FormatRateRange(UnitRange<uint64_t> range) {
  return Shortest(static_cast<double>(range.lo), kRateUnits) + ".." +
         Shortest(static_cast<double>(range.hi), kRateUnits);
}

std::string FormatSizeRange(UnitRange<uint64_t> range) {
  auto size = [](uint64_t n) {
    if (n >= (uint64_t{1} << 40) && n % (uint64_t{1} << 40) == 0)
      return std::to_string(n >> 40) + "TiB";
    return FormatSize(n);
  };
  return size(range.lo) + ".." + size(range.hi);
}

Result<Duration> ParseDuration(std::string_view text, UnitRange<Duration> range) {
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
  const double ns = std::round(q->number * q->scale);
  if (ns < static_cast<double>(range.lo.count()) || ns > static_cast<double>(range.hi.count()))
    return OutOfRange("duration", text, FormatDurationRange(range));
  return Duration(static_cast<int64_t>(ns));
}

Result<uint64_t> ParseRateBitsPerSec(std::string_view text, UnitRange<uint64_t> range) {
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
  const double bits = std::round(q->number * q->scale);
  if (bits < static_cast<double>(range.lo) || bits > static_cast<double>(range.hi))
    return OutOfRange("rate", text, FormatRateRange(range));
  return static_cast<uint64_t>(bits);
}

Result<uint64_t> ParseSizeBytes(std::string_view text, UnitRange<uint64_t> range) {
  auto q =
      SplitQuantity(text, kSizeUnits, "size", "a number and an optional unit, like 4M or 512K");
  if (!q.ok()) return q.status();
  if (q->scale == 0)
    return InvalidArgument("bad size unit in " + Quote(text) +
                           ": use B, K, M or G (binary multiples)");
  const double bytes = std::round(q->number * q->scale);
  if (bytes < static_cast<double>(range.lo) || bytes > static_cast<double>(range.hi))
    return OutOfRange("size", text, FormatSizeRange(range));
  return static_cast<uint64_t>(bytes);
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
  return std::min(kTbfBursts.hi, std::max<uint64_t>(128 * 1024, bits_per_sec / 8 / 100));
}

std::string FormatUtcSeconds(int64_t wall_ns) {
  const time_t secs = static_cast<time_t>(wall_ns / 1000000000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace fdrill

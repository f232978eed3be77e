// Parsing of the units that appear in scenarios and flags. Every parser
// rejects what it does not understand with a hint naming the accepted forms,
// so "100mbps" never silently becomes something else.
//   durations: "15s", "500ms", "2m", "1h", "250us" (a bare number is an error)
//   rates (bits per second, tc's spelling): "100mbit", "1gbit", "64kbit", "800bit"
//   sizes (bytes, binary multiples as nccl-tests' -b/-e): "4M", "4MB", "4MiB",
//          "512K", "1G", "1024" (bare number = bytes)
// Every parser also takes the range its value must lie in, and refuses one
// outside it as `KIND "TEXT" is out of range: accepted LO..HI`. The check is
// made on the number as written times its unit, before any conversion to
// an integer, so no text overflows (99999999tbit once became 2^63 bit/s).
// Without a range, the kind's whole range applies (kDurations, kRates,
// kSizes); a caller narrows it to what its setting can mean.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/core/result.h"

namespace fdrill {

using Duration = std::chrono::nanoseconds;

// The closed range [lo, hi] a parsed value must lie in.
template <class T>
struct UnitRange {
  T lo;
  T hi;
};

// Durations: up to a week. A drill, its faults and its timeouts are minutes
// to hours; sums of many of them stay far from int64 nanoseconds' limit.
inline constexpr UnitRange<Duration> kDurations{Duration(0), std::chrono::hours(168)};
// Rates: tbf cannot shape below 8kbit; no link comes near 10tbit (800G
// ports are the fastest shipping), and 10tbit in bytes per second still
// fits tc's 64-bit rate.
inline constexpr UnitRange<uint64_t> kRates{8'000, 10'000'000'000'000};
// Sizes: up to 16TiB, more than any one node's memory.
inline constexpr UnitRange<uint64_t> kSizes{0, uint64_t{16} << 40};

Result<Duration> ParseDuration(std::string_view text, UnitRange<Duration> range = kDurations);
Result<uint64_t> ParseRateBitsPerSec(std::string_view text, UnitRange<uint64_t> range = kRates);
Result<uint64_t> ParseSizeBytes(std::string_view text, UnitRange<uint64_t> range = kSizes);

// Counts, ports, ranks: "VALUE is out of range: accepted MIN..MAX".
std::string IntOutOfRange(std::string_view value, int64_t min, int64_t max);
// TEXT is an integer ("-"? digits) that does not fit in int64 (a reader that
// could not convert it says "out of range", not "not an integer").
bool IsIntegerBeyondInt64(std::string_view text);

// "1ms..168h", "8kbit..10tbit", "2KiB..1GiB": a range as its messages write it.
std::string FormatDurationRange(UnitRange<Duration> range);
std::string FormatRateRange(UnitRange<uint64_t> range);
std::string FormatSizeRange(UnitRange<uint64_t> range);

// "15s", "500ms", "1.5s": the shortest exact form for messages and plans.
std::string FormatDuration(Duration d);
// "2026-12-02T15:42:03Z": a wall time (ns since the epoch) in UTC, to the second.
std::string FormatUtcSeconds(int64_t wall_ns);
// "100mbit": tc's spelling, exact when the rate is a whole multiple.
std::string FormatRate(uint64_t bits_per_sec);
// A tbf's burst: at least one MTU-sized packet (2KiB), at most 2GiB (tc
// passes it to the kernel as 32 bits).
inline constexpr UnitRange<uint64_t> kTbfBursts{2048, uint64_t{2} << 30};
// A tbf's burst at `bits_per_sec` unless told otherwise: veth and GSO hand
// tbf super-packets of up to 64 KiB and tbf drops a packet larger than its
// burst, so at least 128 KiB, or 10 ms of rate when that is more, and never
// more than kTbfBursts.hi.
uint64_t DefaultTbfBurstBytes(uint64_t bits_per_sec);
// "4MiB", "512KiB", "100B".
std::string FormatSize(uint64_t bytes);

double ToSeconds(Duration d);

}  // namespace fdrill

// Parsing of the units that appear in scenarios and flags. Every parser
// rejects what it does not understand with a hint naming the accepted forms,
// so "100mbps" never silently becomes something else.
//   durations: "15s", "500ms", "2m", "1h", "250us" (a bare number is an error)
//   rates (bits per second, tc's spelling): "100mbit", "1gbit", "64kbit", "800bit"
//   sizes (bytes, binary multiples as nccl-tests' -b/-e): "4M", "4MB", "4MiB",
//          "512K", "1G", "1024" (bare number = bytes)
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "harness/core/result.h"

namespace fdrill {

using Duration = std::chrono::nanoseconds;

Result<Duration> ParseDuration(std::string_view text);
Result<uint64_t> ParseRateBitsPerSec(std::string_view text);
Result<uint64_t> ParseSizeBytes(std::string_view text);

// "15s", "500ms", "1.5s": the shortest exact form for messages and plans.
std::string FormatDuration(Duration d);
// "100mbit": tc's spelling, exact when the rate is a whole multiple.
std::string FormatRate(uint64_t bits_per_sec);
// A tbf's burst at `bits_per_sec` unless told otherwise: veth and GSO hand
// tbf super-packets of up to 64 KiB and tbf drops a packet larger than its
// burst, so at least 128 KiB, or 10 ms of rate when that is more.
uint64_t DefaultTbfBurstBytes(uint64_t bits_per_sec);
// "4MiB", "512KiB", "100B".
std::string FormatSize(uint64_t bytes);

double ToSeconds(Duration d);

}  // namespace fdrill

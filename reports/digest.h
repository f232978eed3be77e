// Whether a job's final digest is its fault-free run's (expect.digest):
// bitwise (the same "digest: HEX" string) or, for a framework whose
// arithmetic is not bitwise deterministic, a number the job prints within a
// stated relative difference.
#pragma once

#include <optional>
#include <string>

namespace fdrill {

// |a - b| / max(|a|, |b|) of two printed numbers (0 when both are 0);
// nullopt when either is not a finite number.
std::optional<double> RelativeDifference(const std::string& a, const std::string& b);

// Without TOLERANCE: GOT == EXPECTED (and neither empty). With it: both are
// finite numbers whose relative difference is at most TOLERANCE.
bool DigestsAgree(const std::string& got, const std::string& expected,
                  std::optional<double> tolerance);

}  // namespace fdrill

// How a scenario names a fault in an expectation (`expect.metrics[].fault`):
// by its id as run, or by the id it was written with before a selector, a
// repeat or a ramp expanded it ("flap" names "flap@n1", "flap#2",
// "flap#2@n1@25mbit"). Shared by the loader (which checks a name matches
// something) and the reports (which evaluate it).
#pragma once

#include <string_view>

namespace fdrill {

inline bool FaultRefMatches(std::string_view id, std::string_view ref) {
  if (id == ref) return true;
  if (id.size() <= ref.size() || id.substr(0, ref.size()) != ref) return false;
  const char next = id[ref.size()];
  return next == '@' || next == '#';
}

}  // namespace fdrill

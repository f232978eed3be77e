// What the drill analysis tests share (drill_analysis_test.cc and its
// neighbours), over the synthetic runs of tests/reports/synthetic_run.h.
//
// Find              the summary's expectation NAME, or nullptr.
// HasError          whether one of the summary's errors holds PART.
// SlowThatRecovers  iterations starting in [15, 22) run 3x slower: the fault
//                   is on from 15 to 20 and the fabric takes 2.0 s more to
//                   come back.
#pragma once

#include <algorithm>
#include <string>

#include "reports/analysis.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill::reports_test {

inline const ExpectationResult* Find(const Summary& s, const std::string& name) {
  auto it = std::find_if(s.expectations.begin(), s.expectations.end(),
                         [&](const ExpectationResult& e) { return e.name == name; });
  return it == s.expectations.end() ? nullptr : &*it;
}

inline bool HasError(const Summary& s, const std::string& part) {
  return std::any_of(s.errors.begin(), s.errors.end(),
                     [&](const std::string& e) { return e.find(part) != std::string::npos; });
}

inline SyntheticRun SlowThatRecovers() {
  SyntheticRun run = SyntheticRun::SlowN2(22.0);
  return run;
}

}  // namespace fdrill::reports_test

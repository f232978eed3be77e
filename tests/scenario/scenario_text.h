// Helpers for loader tests: edit a scenario text, load it or take its error.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "harness/scenario/scenario.h"

namespace fdrill::scenario_test {

// TEXT with the first FROM replaced by TO (a test failure when FROM is absent).
inline std::string Replace(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// TEXT loaded as drill.yaml (a test failure, and an empty Scenario, when it
// is refused).
inline Scenario Load(const std::string& text) {
  auto s = ParseScenario(text, "drill.yaml");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : Scenario{};
}

// The refusal of TEXT loaded as drill.yaml (a test failure when it loads).
inline std::string ErrorOf(const std::string& text) {
  auto s = ParseScenario(text, "drill.yaml");
  EXPECT_FALSE(s.ok()) << "expected an error";
  return s.ok() ? "" : s.status().message();
}

}  // namespace fdrill::scenario_test

// Where a test writes its files: a directory of its own under the system
// temp directory, which the test (its TearDown or destructor) removes.
//
// MakeTempDir   a new, empty directory PREFIXxxxxxx made by mkdtemp: unique
//               even among tests of one process; "" when it cannot be made.
// ScratchPath   PREFIX<pid>-<this test's name>: stable, so a test can name
//               it in messages; whatever a crashed run left there is
//               removed first, and nothing is created (callers make it).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace fdrill {

inline std::string MakeTempDir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  return mkdtemp(pattern.data()) != nullptr ? pattern : "";
}

inline std::filesystem::path ScratchPath(const std::string& prefix) {
  const auto path = std::filesystem::temp_directory_path() /
                    (prefix + std::to_string(getpid()) + "-" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(path);
  return path;
}

}  // namespace fdrill

// Recording fakes call ExpectKnownProgram on every argv they are asked to
// run: a program that common/host/programs.cc does not list fails the test,
// so every program the code runs has a row there (and its package a place in
// the set-up, which tests/core/programs_test.cc checks).
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/host/programs.h"

namespace fdrill {

inline void ExpectKnownProgram(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    ADD_FAILURE() << "a fake ProcessRunner was asked to run an empty argv";
    return;
  }
  if (FindExternalProgram(argv[0]) == nullptr) {
    ADD_FAILURE()
        << "the code ran `" << argv[0]
        << "`, which common/host/programs.cc does not list: add a row with its Debian package, "
           "and the package to scripts/setup-common.sh";
  }
}

}  // namespace fdrill

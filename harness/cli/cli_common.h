// What the fdrill commands share: how a command that cannot do what was
// asked ends, and where fdrill's own programs are.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "common/core/status.h"

namespace fdrill {

// The error on stderr as "fdrill: MESSAGE"; the harness's exit code, 2.
inline int Fail(const Status& s) {
  std::fprintf(stderr, "fdrill: %s\n", s.message().c_str());
  return 2;
}

// The directory this fdrill runs from: fdrill-collective, fdrill-train-ref
// and the mpirun wrapper are beside it (packaging/CMakeLists.txt).
inline std::string BinDir() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : self.parent_path().string();
}

}  // namespace fdrill

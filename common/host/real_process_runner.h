// RealProcessRunner: fork/exec with pipes for stdout and stderr, poll() with a
// deadline, SIGKILL of the child (by pid) when the deadline passes.
// Thread-safe: every Run is independent.
#pragma once

#include "common/host/host.h"

namespace fdrill {

class RealProcessRunner final : public ProcessRunner {
 public:
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration timeout) override;
};

class RealSysFs final : public SysFs {
 public:
  Result<std::string> Read(const std::string& path) override;
  Status Write(const std::string& path, const std::string& value) override;
  Status WriteSecret(const std::string& path, const std::string& value) override;
  bool Exists(const std::string& path) override;
  Status MakeDir(const std::string& path) override;
  Status RemoveDir(const std::string& path) override;
  Status RemoveFile(const std::string& path) override;
  // readdir; a symlinked directory (every /sys/class/* entry) is followed.
  Result<std::vector<std::string>> List(const std::string& dir) override;
  Result<bool> SameFile(const std::string& a, const std::string& b) override;
};

}  // namespace fdrill

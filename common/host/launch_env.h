// Environment left for the next workload launch on a node: the nccl_env
// fault writes `<dir>/<name>.env` (NAME=VALUE lines, NCCL_* names only) and
// fdrill-collective, at start-up and before any NCCL call, exports what every
// such file in `$TMPDIR/fdrill-launch-env` holds. The directory is per node
// because TMPDIR is (the emulated fabric gives each node its own; on a real
// host agent and ranks share /tmp). Only NCCL_* names pass, both ways, so no
// scenario can change a rank's PATH or LD_PRELOAD through it.
#pragma once

#include <map>
#include <string>

#include "common/core/result.h"

namespace fdrill {

// "<tmpdir>/fdrill-launch-env".
std::string LaunchEnvDir(const std::string& tmpdir);

bool IsNcclEnvName(const std::string& name);

// The text of one env file, NAME=VALUE per line, names in order.
std::string FormatLaunchEnv(const std::map<std::string, std::string>& env);

// Every *.env file of `dir` (an absent dir is empty), later files (by name)
// overriding earlier ones; InvalidArgument naming file and line for a line
// that is not NCCL_NAME=VALUE.
Result<std::map<std::string, std::string>> ReadLaunchEnv(const std::string& dir);

}  // namespace fdrill

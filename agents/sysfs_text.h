// Reading sysfs attributes as the inventory and the telemetry sampler need
// them: one value per file, a trailing newline, and files or directories
// that are simply absent on some machines (a down link has no speed, a VM no
// numa_node, a kernel without the RDMA stack no /sys/class/infiniband).
// Absence is an empty answer here, never an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/host/host.h"

namespace fdrill {

std::string TrimSpace(const std::string& s);

// The file's text without surrounding whitespace; nullopt when it cannot be
// read or is empty.
std::optional<std::string> ReadSysText(SysFs& sysfs, const std::string& path);

// A whole-string integer: decimal, or with base 16 an optional "0x" ("0x1a").
std::optional<int64_t> ParseSysInt(const std::string& text, int base = 10);
std::optional<int64_t> ReadSysInt(SysFs& sysfs, const std::string& path, int base = 10);

// The entries of `dir`; a directory that does not exist has none. Other
// failures (permission) are errors.
Result<std::vector<std::string>> ListOrNone(SysFs& sysfs, const std::string& dir);

// The entries named PREFIX<number> in numeric order: ports "1", "2", "10";
// NUMA nodes "node0", "node1". Others are skipped.
std::vector<std::pair<int64_t, std::string>> NumberedEntries(const std::vector<std::string>& names,
                                                             const std::string& prefix = "");

}  // namespace fdrill

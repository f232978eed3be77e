// Logging: spdlog, one logger for the process. Set up once in main().
#pragma once

#include <string>

#include <spdlog/spdlog.h>

namespace fdrill {

// level: "debug", "info", "warn", "error". Logs go to stderr.
void InitLogging(const std::string& program, const std::string& level);

}  // namespace fdrill

// What the end-to-end drill tests run and read: the fdrill binary under test
// (FDRILL_BIN, which the test's target defines), a tool's stdout, and a run
// directory's JSON files.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/host/real_process_runner.h"

namespace fdrill::e2e {

// `fdrill ARGS...`; a runner error fails the test and reads as an empty result.
inline ProcessResult Fdrill(std::vector<std::string> args, int timeout_s = 60) {
  RealProcessRunner runner;
  args.insert(args.begin(), FDRILL_BIN);
  auto r = runner.Run(args, std::chrono::seconds(timeout_s));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ProcessResult{};
}

// A tool's stdout ("" when it could not run).
inline std::string Sh(const std::vector<std::string>& argv) {
  RealProcessRunner runner;
  auto r = runner.Run(argv, std::chrono::seconds(10));
  return r.ok() ? r->out : "";
}

// Starts argv in the background in its own session, stdout and stderr to
// `log`; returns its pid (the caller waits for it or kills it).
inline pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::fflush(stdout);  // or the child, reopening stdout, writes our buffered output again
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    FILE* f = freopen(log.c_str(), "a", stdout);
    (void)f;
    dup2(1, 2);
    std::vector<char*> c;
    for (const auto& a : argv) c.push_back(const_cast<char*>(a.c_str()));
    c.push_back(nullptr);
    execv(c[0], c.data());
    _exit(127);
  }
  return pid;
}

inline nlohmann::json ReadJson(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

}  // namespace fdrill::e2e

// The command line of fdrill-collective: CLI11 reads the flags, then every
// value is checked here, before MPI or a device is touched, with errors that
// name the flag and the accepted forms. Pure apart from reading nothing but
// its arguments; CLI11's exceptions stay inside cli.cc.
#pragma once

#include <string>
#include <vector>

#include "common/core/result.h"
#include "workloads/config.h"

namespace fdrill {

struct Invocation {
  // --help or --version: print `text` to stdout and exit 0 without running.
  bool print_and_exit = false;
  std::string text;
  Config config;  // when !print_and_exit
};

// args[0] is the program name, as in argv.
Result<Invocation> ParseCommandLine(const std::vector<std::string>& args);

// "fdrill-collective 0.1.0 (backends: mpi nccl)"
std::string VersionString();

}  // namespace fdrill

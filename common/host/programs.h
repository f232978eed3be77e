// The external programs fdrill, fdrill-agent, the emulated fabric and the
// project's scripts run, each with the Debian package that ships it and who
// installs it. This table is the one list: tests/core/programs_test.cc checks
// every row against the set-up's package lists and dpkg's own file lists, the
// recording fakes refuse a program that is not in it, and RealProcessRunner
// names the package when a program is missing ("nft is not installed
// (Debian package nftables)").
//
// "Program not found" has one definition: ProcessRunner::Run returns a
// Status with code kNotInstalled (ProgramMissing below), whoever runs it —
// RealProcessRunner, a runner that wraps argv (`ip netns exec NS ...`), or a
// fake. Callers test IsProgramMissing(), never a message.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/core/result.h"

namespace fdrill {

enum class ProgramNeed {
  kSetUp,     // installed by scripts/setup-common.sh (FDRILL_PACKAGES) or Essential in Debian
  kOptional,  // may be missing: `without` says what then happens, and a test covers it
  kBuilt,     // built by this project into build/bin
  kScript,    // installed by the one script that uses it (`installed_by`)
};

struct ExternalProgram {
  std::string_view name;     // argv[0]
  std::string_view package;  // the Debian package that ships it ("" for kBuilt)
  ProgramNeed need;
  std::string_view used_by;       // who runs it, for what
  std::string_view without = "";  // kOptional: the degraded behaviour, and its test
  std::string_view installed_by = "scripts/setup-common.sh";
};

// Every row, in a stable order.
std::span<const ExternalProgram> ExternalPrograms();

// The row for `name` (argv[0], a path's last component counts), or nullptr.
const ExternalProgram* FindExternalProgram(std::string_view name);

// The Status every ProcessRunner returns when `program` is not installed:
// code kNotInstalled, and the Debian package that ships it when the table
// knows it. `why` is the OS's word ("No such file or directory").
Status ProgramMissing(std::string_view program, std::string_view why = "No such file or directory");
inline bool IsProgramMissing(const Status& s) { return s.code() == StatusCode::kNotInstalled; }

// execvp's lookup without the exec: `program` itself when it holds a '/',
// else the first executable PATH entry. NotInstalled (ProgramMissing) when
// there is none.
Result<std::string> FindInPath(std::string_view program);

}  // namespace fdrill

// Where a rank writes its metrics: the --jsonl path templates of
// fdrill-collective and `fdrill job-rank`. No MPI, so the CLI links it.
#pragma once

#include <string>
#include <string_view>

namespace fdrill {

// Every FROM in TEXT replaced by TO, left to right (TO is not searched again).
void ReplaceAll(std::string* text, std::string_view from, std::string_view to);

// Replaces every "{rank}" with `rank`, "{tmpdir}" with `tmpdir` and
// "{host}" with `host` (the rank's gethostname()).
std::string ExpandPathTemplate(std::string_view path_template, int rank, std::string_view tmpdir,
                               std::string_view host);

// $TMPDIR when set and not empty, else "/tmp".
std::string TmpDirFromEnv();

// gethostname(), or "unknown" if it fails.
std::string HostName();

}  // namespace fdrill

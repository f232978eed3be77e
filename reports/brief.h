// The one-screen summary `fdrill run` and `fdrill report` end with: the
// verdict, each fault's slowdown and recovery, whether the fabric was left as
// found and the data intact, failed expectations, and where the report is.
// Plain text, at most ~20 lines for a drill of a few faults; the full story
// is report.md. Pure.
#pragma once

#include <string>

#include "reports/summary.h"

namespace fdrill {

// `dir` is the run directory as the user should see it (absolute).
std::string BriefText(const Summary& summary, const std::string& dir);

}  // namespace fdrill

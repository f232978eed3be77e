// report.md: the human report of one run — the verdict in the title, then
// baseline, phases, faults, rollback, expectations (PASS/FAIL), residue and
// errors. Absent numbers print as "—"; a fault that was reverted but never
// came back into the baseline band prints "never" as its recovery time.
#pragma once

#include <string>

#include "reports/summary.h"

namespace fdrill {

std::string RenderMarkdown(const Summary& summary);

}  // namespace fdrill

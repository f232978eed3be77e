// summary.json: the Summary as the JSON object promised to users (every
// key: docs/reference/summary-json.md): verdict, phases[], faults[],
// residue[], rollback, expectations[], plus
// name, baseline, residue_checked and errors[]. Keys keep this order; absent
// numbers are null; numbers are rounded to 6 significant digits so the file
// reads cleanly without claiming precision the clocks do not have.
#pragma once

#include <string>

#include "reports/summary.h"

namespace fdrill {

// Pretty-printed, newline-terminated.
std::string RenderSummaryJson(const Summary& summary);

}  // namespace fdrill

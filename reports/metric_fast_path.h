// The fast path for metrics.jsonl: a run of a million records spends most of
// its report time parsing JSON, and nearly every line is the same flat object
// fdrill-collective writes. ParseMetricLineFast reads such a line without
// building a JSON tree; anything it does not fully understand — a nested
// value, an escape or a non-ASCII byte in a string, a duplicate key, a number
// that does not fit, a missing or mistyped key, malformed JSON — makes it
// return false, and the caller then uses the strict ParseMetricLine
// (run_dir.h), which decides and names the problem. So the contract is:
// when it returns true, *out is exactly what ParseMetricLine would return.
// ParseMetricFields is the same with views into the line (no allocation at
// all): what LoadRunDir appends to its MetricTable. Pure.
#pragma once

#include <string_view>

#include "reports/metric_table.h"

namespace fdrill {

bool ParseMetricFields(std::string_view line, MetricFields* out);
bool ParseMetricLineFast(std::string_view line, MetricRecord* out);

}  // namespace fdrill

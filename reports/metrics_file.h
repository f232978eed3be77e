// A run directory's metrics: metrics.jsonl as the controller writes it, or
// metrics.jsonl.zst, the same compressed with zstd (after the drill, e.g.
// `zstd --rm metrics.jsonl`; docs/reference/formats.md). When both are there the plain
// one is read: it is the one the controller writes, and a .zst beside it may be
// a compression still under way. Read a chunk at a time (line_reader.h) into a
// MetricTable, each line through the fast path (metric_fast_path.h) and, when
// it declines, the strict parser, whose errors name "file:line" and the key.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/core/status.h"
#include "reports/metric_table.h"

namespace fdrill {

inline constexpr char kMetricsFile[] = "metrics.jsonl";

// The metrics file of the run directory ROOT; empty when it has neither form.
std::filesystem::path MetricsFileOf(const std::filesystem::path& root);

// Appends every record of ROOT's metrics file to *out; with neither form
// there, notes "metrics.jsonl is absent" in *notes (the workload may never
// have started) and returns ok.
Status ReadMetricsFile(const std::filesystem::path& root, MetricTable* out,
                       std::vector<std::string>* notes);

}  // namespace fdrill

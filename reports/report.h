// The entry point of reports/: turn a run directory into its verdict.
// WriteReports loads the directory (run_dir.h), analyzes it (analysis.h) and
// writes summary.json, report.md, report.html and junit.xml into it, each replaced atomically
// (written beside, then renamed), so a reader never sees half a report.
// Rerunning it on the same directory rewrites the same files. A directory
// that cannot be read is an error Status (the caller exits 2); a drill that
// went wrong is not: it is a Summary whose verdict says so, and
// ExitCodeForVerdict (summary.h) maps it to pass 0, fail 1, error 2.
#pragma once

#include <string>

#include "common/core/result.h"
#include "reports/analysis.h"
#include "reports/summary.h"

namespace fdrill {

inline constexpr char kSummaryFile[] = "summary.json";
inline constexpr char kReportFile[] = "report.md";
inline constexpr char kHtmlReportFile[] = "report.html";
inline constexpr char kJunitFile[] = "junit.xml";

Result<Summary> WriteReports(const std::string& run_dir, const AnalysisOptions& options = {});

}  // namespace fdrill

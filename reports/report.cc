#include "reports/report.h"

#include <filesystem>
#include <utility>

#include "common/core/files.h"
#include "reports/html_report.h"
#include "reports/json_report.h"
#include "reports/junit_report.h"
#include "reports/markdown_report.h"
#include "reports/run_dir.h"

namespace fdrill {

Result<Summary> WriteReports(const std::string& run_dir, const AnalysisOptions& options) {
  Result<RunData> run = LoadRunDir(run_dir);
  if (!run.ok()) return run.status();
  Summary summary = Analyze(*run, options);
  const std::filesystem::path dir(run_dir);
  const std::pair<const char*, std::string> files[] = {
      {kSummaryFile, RenderSummaryJson(summary)},
      {kReportFile, RenderMarkdown(summary)},
      {kHtmlReportFile, RenderHtml(summary, *run)},
      {kJunitFile, RenderJunit(summary)},
  };
  for (const auto& [name, text] : files) {
    if (Status s = WriteFileAtomically(dir / name, text); !s.ok()) return s;
  }
  return summary;
}

}  // namespace fdrill

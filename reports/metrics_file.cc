#include "reports/metrics_file.h"

#include <fmt/format.h>

#include "reports/line_reader.h"
#include "reports/metric_fast_path.h"
#include "reports/run_dir.h"

namespace fdrill {

namespace fs = std::filesystem;

fs::path MetricsFileOf(const fs::path& root) {
  std::error_code ec;
  for (fs::path p : {root / kMetricsFile, root / (std::string(kMetricsFile) + kZstdSuffix)}) {
    if (fs::exists(p, ec)) return p;
  }
  return {};
}

Status ReadMetricsFile(const fs::path& root, MetricTable* out, std::vector<std::string>* notes) {
  const fs::path path = MetricsFileOf(root);
  if (path.empty()) {
    notes->push_back("metrics.jsonl is absent");
    return Status::Ok();
  }
  Result<std::unique_ptr<LineReader>> reader = LineReader::Open(path);
  if (!reader.ok()) return reader.status();
  // About 300 bytes a plain record: reserving saves the copies of growing
  // columns (address space only: pages never written cost no memory).
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (!ec && path.extension() != kZstdSuffix) out->reserve(static_cast<size_t>(size / 256));
  const std::string file = path.filename().string();
  std::string_view line;
  while (true) {
    Result<bool> more = (*reader)->Next(&line);
    if (!more.ok()) return more.status();
    if (!*more) return Status::Ok();
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    MetricFields fields;
    if (ParseMetricFields(line, &fields)) {
      out->Append(fields);
      continue;
    }
    Result<MetricRecord> parsed =
        ParseMetricLine(line, fmt::format("{}:{}", file, (*reader)->number()));
    if (!parsed.ok()) return parsed.status();
    out->push_back(*parsed);
  }
}

}  // namespace fdrill

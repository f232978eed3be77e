// report.html's "Over time": bus bandwidth and iteration time per rank as
// SVG charts (svg_plot.h), fault windows and job-down spans shaded, phase
// starts marked, each rank's line broken where it recorded nothing and
// downsampled to options.max_points_per_series keeping every extreme.
#pragma once

#include <string>

#include "reports/html_report.h"

namespace fdrill {

// Appends the section (heading, both charts, legend, note) to *out.
void WriteHtmlCharts(const Summary& s, const RunData& run, const HtmlOptions& options,
                     std::string* out);

}  // namespace fdrill

// report.html: the run on one page for a person — the verdict, iteration time
// and busbw over time for every rank with the fault windows shaded and
// labelled and the phase boundaries drawn, then the tables of report.md
// (phases, faults, counters when sampled, rollback, expectations, residue,
// errors). One self-contained file: inline CSS and SVG (svg_plot.h), no
// script, no font, image or link to anything outside, so it opens offline and
// can be mailed or attached to a ticket as it is. Every line is reduced to at
// most max_points_per_series points by min/max downsampling, which keeps each
// spike and stall visible and the page small for million-record runs. Pure.
#pragma once

#include <cstddef>
#include <string>

#include "reports/run_data.h"
#include "reports/summary.h"

namespace fdrill {

struct HtmlOptions {
  size_t max_points_per_series = 2000;
};

// `run` supplies the per-rank records the charts draw; `summary` is
// Analyze(run) and supplies everything else.
std::string RenderHtml(const Summary& summary, const RunData& run, const HtmlOptions& options = {});

}  // namespace fdrill

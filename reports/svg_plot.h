// Time-series charts as inline SVG, for report.html: no script, no font or
// stylesheet from elsewhere, so the page renders offline and the same in every
// browser. One chart: lines (one per series) over a shared time axis, fault
// windows shaded and labelled (Jepsen's nemesis regions), phase boundaries as
// dashed verticals, optional horizontal reference lines (the baseline band).
// Series are drawn as given: reduce them first with DownsampleMinMax, which
// keeps every spike and dip a plot of the full data would show. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace fdrill {

struct XY {
  double x = 0;
  double y = 0;
};

// At most max_points (>= 2) of `points` (sorted by x): the points are cut into
// max_points/2 runs of equal count and each run keeps its lowest and highest
// point, in x order. Inputs that already fit come back unchanged.
std::vector<XY> DownsampleMinMax(const std::vector<XY>& points, size_t max_points);

struct ChartSeries {
  std::string label;  // the <title> of its line
  std::string color;  // CSS colour
  std::vector<XY> points;
};

struct ChartBand {  // a shaded x interval: a fault window
  std::string id;   // data-fault attribute and the label on the chart
  std::string tooltip;
  double x0 = 0;
  double x1 = 0;
  // The job was down (failed, until its relaunch reported): grey, not a
  // fault's amber, class "job-down".
  bool job_down = false;
};

struct ChartMarker {  // a dashed vertical: a phase boundary
  std::string label;
  double x = 0;
};

struct ChartRule {  // a horizontal reference: the baseline median, band low
  std::string label;
  double y = 0;
};

struct Chart {
  std::string title;
  std::string y_label;
  bool log_y = false;  // for iteration times: one stall must not flatten the rest
  double x_min = 0;
  double x_max = 1;
  std::vector<ChartSeries> series;
  std::vector<ChartBand> bands;
  std::vector<ChartMarker> markers;
  std::vector<ChartRule> rules;
};

// An <svg> element (no xmlns: inline in HTML5 it needs none), width × height
// in CSS pixels, scaling with its container (viewBox).
std::string RenderSvgChart(const Chart& chart, int width = 1100, int height = 330);

// "Nice" tick positions (1, 2, 5 × 10^k steps) covering [lo, hi], about
// `target` of them.
std::vector<double> NiceTicks(double lo, double hi, int target);

}  // namespace fdrill

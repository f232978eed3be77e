#include "reports/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include <fmt/format.h>

#include "reports/xml_text.h"

namespace fdrill {

namespace {

// Plot area inside the SVG: room for phase labels above, tick labels left and
// below.
constexpr double kLeft = 72, kRight = 16, kTop = 40, kBottom = 42;

struct Axis {
  double lo = 0, hi = 1;  // data units (log10 of them on a log axis)
  double p0 = 0, p1 = 1;  // pixels
  bool log = false;
  double operator()(double v) const {
    const double d = log ? std::log10(std::max(v, 1e-300)) : v;
    const double f = hi > lo ? (d - lo) / (hi - lo) : 0.5;
    return p0 + std::clamp(f, 0.0, 1.0) * (p1 - p0);
  }
};

std::string Tick(double v) { return fmt::format("{:g}", std::fabs(v) < 1e-12 ? 0.0 : v); }

// The y axis: from 0 (or the decade below the smallest value, on a log axis)
// to a nice value above the largest.
Axis YAxis(const Chart& c, double p0, double p1, std::vector<double>* ticks) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  auto take = [&](double y) {
    if (!std::isfinite(y) || (c.log_y && !(y > 0))) return;
    lo = std::min(lo, y);
    hi = std::max(hi, y);
  };
  for (const ChartSeries& s : c.series) {
    for (const XY& p : s.points) take(p.y);
  }
  for (const ChartRule& r : c.rules) take(r.y);
  Axis a{.p0 = p0, .p1 = p1, .log = c.log_y};
  if (!std::isfinite(lo)) {
    lo = c.log_y ? 1 : 0;
    hi = c.log_y ? 10 : 1;
  }
  if (c.log_y) {
    a.lo = std::floor(std::log10(lo));
    a.hi = std::max(a.lo + 1, std::ceil(std::log10(hi)));
    for (double decade = a.lo; decade < a.hi + 0.5; ++decade) {
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10.0, decade);
        if (std::log10(v) <= a.hi + 1e-9) ticks->push_back(v);
      }
    }
    return a;
  }
  lo = std::min(lo, 0.0);
  if (hi <= lo) hi = lo + 1;
  *ticks = NiceTicks(lo, hi * 1.04, 5);
  a.lo = ticks->front();
  a.hi = ticks->back();
  return a;
}

}  // namespace

std::vector<XY> DownsampleMinMax(const std::vector<XY>& points, size_t max_points) {
  max_points = std::max<size_t>(max_points, 2);
  if (points.size() <= max_points) return points;
  const size_t buckets = max_points / 2;
  const size_t n = points.size();
  std::vector<XY> out;
  out.reserve(max_points);
  for (size_t b = 0; b < buckets; ++b) {
    const size_t begin = b * n / buckets;
    const size_t end = (b + 1) * n / buckets;
    size_t lo = begin, hi = begin;
    for (size_t i = begin + 1; i < end; ++i) {
      if (points[i].y < points[lo].y) lo = i;
      if (points[i].y > points[hi].y) hi = i;
    }
    out.push_back(points[std::min(lo, hi)]);
    if (lo != hi) out.push_back(points[std::max(lo, hi)]);
  }
  return out;
}

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(target, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (double v = std::floor(lo / step) * step; v < hi + step * 0.999; v += step) {
    ticks.push_back(v);
  }
  return ticks;
}

std::string RenderSvgChart(const Chart& c, int width, int height) {
  std::string out;
  auto w = std::back_inserter(out);
  const Axis x{.lo = c.x_min, .hi = c.x_max, .p0 = kLeft, .p1 = width - kRight};
  std::vector<double> y_ticks;
  const Axis y = YAxis(c, height - kBottom, kTop, &y_ticks);
  const double plot_h = (height - kBottom) - kTop;

  fmt::format_to(w,
                 "<svg class=\"chart\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" "
                 "role=\"img\" aria-label=\"{2}\" font-family=\"sans-serif\" font-size=\"11\">\n"
                 "<title>{2}</title>\n<rect x=\"{3}\" y=\"{4}\" width=\"{5:.1f}\" "
                 "height=\"{6:.1f}\" fill=\"#fff\" stroke=\"#bbb\"/>\n",
                 width, height, EscapeXml(c.title), kLeft, kTop, x.p1 - x.p0, plot_h);
  fmt::format_to(w, "<text x=\"{}\" y=\"14\" font-size=\"13\" font-weight=\"bold\">{}</text>\n",
                 kLeft, EscapeXml(c.title));

  for (const ChartBand& b : c.bands) {
    const double x0 = x(b.x0);
    const double x1 = std::max(x(b.x1), x0 + 1);
    if (b.job_down) {
      fmt::format_to(
          w,
          "<g class=\"job-down\"><title>{0}</title><rect class=\"job-down\" "
          "x=\"{1:.1f}\" y=\"{2}\" width=\"{3:.1f}\" height=\"{4:.1f}\" fill=\"#6b7280\" "
          "fill-opacity=\"0.25\" stroke=\"#374151\" stroke-dasharray=\"3 2\"/>"
          "<text x=\"{5:.1f}\" y=\"{6}\" fill=\"#1f2937\">{7}</text></g>\n",
          EscapeXml(b.tooltip), x0, kTop, x1 - x0, plot_h, x0 + 3, kTop + 24, EscapeXml(b.id));
      continue;
    }
    fmt::format_to(w,
                   "<g class=\"fault-window\" data-fault=\"{0}\"><title>{1}</title>"
                   "<rect class=\"fault-window\" data-fault=\"{0}\" x=\"{2:.1f}\" y=\"{3}\" "
                   "width=\"{4:.1f}\" height=\"{5:.1f}\" fill=\"#f59e0b\" fill-opacity=\"0.2\" "
                   "stroke=\"#d97706\" stroke-opacity=\"0.5\"/>"
                   "<text x=\"{6:.1f}\" y=\"{7}\" fill=\"#92400e\">{0}</text></g>\n",
                   EscapeXml(b.id), EscapeXml(b.tooltip), x0, kTop, x1 - x0, plot_h, x0 + 3,
                   kTop + 12);
  }
  for (double v : y_ticks) {
    fmt::format_to(w,
                   "<line x1=\"{0}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#eee\"/>"
                   "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\" fill=\"#444\">{5}</text>\n",
                   kLeft, x.p1, y(v), kLeft - 6, y(v) + 4, Tick(v));
  }
  for (double v : NiceTicks(c.x_min, c.x_max, 10)) {
    if (v < c.x_min - 1e-9 || v > c.x_max + 1e-9) continue;
    fmt::format_to(w,
                   "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
                   "stroke=\"#bbb\"/><text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\" "
                   "fill=\"#444\">{4}</text>\n",
                   x(v), height - kBottom, height - kBottom + 4, height - kBottom + 16, Tick(v));
  }
  for (const ChartMarker& m : c.markers) {
    fmt::format_to(w,
                   "<g class=\"phase\"><line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" "
                   "y2=\"{2:.1f}\" stroke=\"#6b7280\" stroke-dasharray=\"4 3\"/>"
                   "<text x=\"{3:.1f}\" y=\"{4}\" fill=\"#374151\">{5}</text></g>\n",
                   x(m.x), kTop - 4, height - kBottom, x(m.x) + 2, kTop - 8, EscapeXml(m.label));
  }
  for (const ChartSeries& s : c.series) {
    fmt::format_to(w,
                   "<polyline class=\"series\" fill=\"none\" stroke=\"{}\" stroke-width=\"1\" "
                   "stroke-linejoin=\"round\" points=\"",
                   EscapeXml(s.color));
    for (const XY& p : s.points) fmt::format_to(w, "{:.1f},{:.1f} ", x(p.x), y(p.y));
    fmt::format_to(w, "\"><title>{}</title></polyline>\n", EscapeXml(s.label));
  }
  for (const ChartRule& r : c.rules) {
    fmt::format_to(w,
                   "<g class=\"rule\"><line x1=\"{0}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" "
                   "y2=\"{2:.1f}\" stroke=\"#111\" stroke-dasharray=\"2 3\"/>"
                   "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\" fill=\"#111\">{5}</text>"
                   "</g>\n",
                   kLeft, x.p1, y(r.y), x.p1 - 4, y(r.y) - 3, EscapeXml(r.label));
  }
  fmt::format_to(w,
                 "<text x=\"{0:.1f}\" y=\"{1}\" text-anchor=\"middle\" fill=\"#444\">"
                 "time since the drill started (s)</text>\n"
                 "<text transform=\"translate(14 {2:.1f}) rotate(-90)\" text-anchor=\"middle\" "
                 "fill=\"#444\">{3}</text>\n</svg>\n",
                 (x.p0 + x.p1) / 2, height - 8, kTop + plot_h / 2, EscapeXml(c.y_label));
  return out;
}

}  // namespace fdrill

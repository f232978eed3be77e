#include "reports/html_charts.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <span>

#include <fmt/format.h>

#include "reports/series.h"
#include "reports/svg_plot.h"
#include "reports/xml_text.h"

namespace fdrill {

namespace {

// Colour-blind-safe (Okabe–Ito), then Tableau's; ranks beyond wrap around.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                    "#56B4E9", "#000000", "#F0E442", "#4E79A7", "#F28E2B",
                                    "#59A14F", "#B07AA1", "#76B7B2", "#EDC948"};

// One rank's records in time order, cut into segments where nothing ran: a
// line drawn across a dead job or a restart would be a ramp through time no
// iteration covered. Row indices into the MetricTable, not points: a day-long
// run has millions a rank, and each segment's points are made only to be
// downsampled (SegmentPoints).
struct RankRows {
  std::string node;
  std::vector<uint32_t> rows;          // by t
  std::vector<size_t> segment_starts;  // in rows
};
// A gap in a rank's records longer than this (from one iteration's end to
// the next one's start), or a new launch of the job, starts a new segment.
constexpr double kLineBreakS = 1.0;

// Per rank (per tenant and rank, with workloads:), its records in time order.
using RankKey = std::pair<std::string, int>;  // (workload, rank)
std::map<RankKey, RankRows> PerRank(const MetricTable& m) {
  std::map<RankKey, RankRows> out;
  const MetricTable::Source* last = nullptr;  // a rank's records share theirs
  RankRows* rows_of_last = nullptr;
  for (size_t i = 0; i < m.size(); ++i) {
    const MetricTable::Source& s = m.source(i);
    if (&s != last) {
      last = &s;
      rows_of_last = &out[{s.workload, s.rank}];
    }
    rows_of_last->rows.push_back(static_cast<uint32_t>(i));
  }
  for (auto& [key, r] : out) {
    const auto by_t = [&](uint32_t a, uint32_t b) { return m.t(a) < m.t(b); };
    if (!std::is_sorted(r.rows.begin(), r.rows.end(), by_t)) {
      std::stable_sort(r.rows.begin(), r.rows.end(), by_t);
    }
    for (size_t k = 0; k < r.rows.size(); ++k) {
      const uint32_t i = r.rows[k];
      if (r.node.empty()) r.node = m.source(i).node;
      const double started = m.t(i) - (m.time_ms(i) + m.wait_ms(i)) / 1000;
      if (k == 0) {
        r.segment_starts.push_back(k);
        continue;
      }
      const uint32_t prev = r.rows[k - 1];
      if (m.source(i).attempt != m.source(prev).attempt || started - m.t(prev) > kLineBreakS) {
        r.segment_starts.push_back(k);
      }
    }
  }
  return out;
}

// A segment's points at each record's t: its own time, or its busbw (the
// record's, or recomputed from its time as series.h does).
std::vector<XY> SegmentPoints(const MetricTable& m, std::span<const uint32_t> rows, bool busbw) {
  std::vector<XY> out;
  out.reserve(rows.size());
  for (uint32_t i : rows) {
    if (!busbw) {
      out.push_back({m.t(i), m.time_ms(i)});
      continue;
    }
    double y = m.busbw_gbps(i);
    if (!(y > 0)) {
      const MetricTable::Source& s = m.source(i);
      y = static_cast<double>(s.bytes) * OpBusFactor(s.op, s.nranks) / m.time_ms(i) / 1e6;
    }
    out.push_back({m.t(i), y});
  }
  return out;
}

// From each failure of the job (workload_failed) until its relaunch
// reported (workload_restart), or the run's end.
std::vector<ChartBand> JobDownBands(const std::vector<Event>& events, double x_max) {
  std::vector<ChartBand> out;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].type != "workload_failed") continue;
    double until = x_max;
    bool relaunched = false;
    for (size_t j = i + 1; j < events.size(); ++j) {
      if (events[j].type == "workload_restart") {
        until = events[j].t;
        relaunched = true;
        break;
      }
    }
    out.push_back(
        {.id = "job down",
         .tooltip = fmt::format("job down from {:.2f} s ({}){}", events[i].t, events[i].reason,
                                relaunched ? fmt::format(", relaunched job reporting at "
                                                         "{:.2f} s",
                                                         until)
                                           : ""),
         .x0 = events[i].t,
         .x1 = until,
         .job_down = true});
  }
  return out;
}

}  // namespace

void WriteHtmlCharts(const Summary& s, const RunData& run, const HtmlOptions& o, std::string* out) {
  const std::map<RankKey, RankRows> ranks = PerRank(run.metrics);
  Chart busbw{.title = "Bus bandwidth per rank", .y_label = "busbw (GB/s)"};
  Chart time{.title = "Iteration time per rank (log scale)",
             .y_label = "iteration time (ms)",
             .log_y = true};
  double x_max = 0;
  for (const Event& e : run.events) x_max = std::max(x_max, e.t);
  for (size_t i = 0; i < run.metrics.size(); ++i) x_max = std::max(x_max, run.metrics.t(i));
  for (Chart* c : {&busbw, &time}) {
    c->x_max = x_max > 0 ? x_max : 1;
    for (const FaultStats& f : s.faults) {
      c->bands.push_back(
          {.id = f.id,
           .tooltip = fmt::format("{}: {} on {} ({}), {:.2f}–{} s", f.id, f.kind, f.node, f.target,
                                  f.applied_at_s,
                                  f.reverted_at_s ? fmt::format("{:.2f}", *f.reverted_at_s)
                                                  : std::string("not reverted")),
           .x0 = f.applied_at_s,
           .x1 = f.reverted_at_s.value_or(c->x_max)});
    }
    for (const PhaseStats& p : s.phases) c->markers.push_back({.label = p.name, .x = p.start_s});
    for (ChartBand& b : JobDownBands(run.events, c->x_max)) c->bands.push_back(std::move(b));
  }
  if (s.baseline.busbw_median) {
    busbw.rules.push_back({.label = "baseline median", .y = *s.baseline.busbw_median});
  }
  if (s.baseline.band_low) busbw.rules.push_back({.label = "band low", .y = *s.baseline.band_low});

  std::string legend = "<p class=\"legend\">";
  size_t i = 0;
  for (const auto& [key, r] : ranks) {
    const char* color = kPalette[i++ % std::size(kPalette)];
    const auto& [workload, rank] = key;
    const std::string label = workload.empty()
                                  ? fmt::format("rank {} ({})", rank, r.node)
                                  : fmt::format("{} rank {} ({})", workload, rank, r.node);
    const size_t total = r.rows.size();
    for (size_t k = 0; k < r.segment_starts.size(); ++k) {
      const size_t from = r.segment_starts[k];
      const size_t to = k + 1 < r.segment_starts.size() ? r.segment_starts[k + 1] : total;
      const std::span<const uint32_t> segment(r.rows.data() + from, to - from);
      // The point budget shared by the segments, as their lengths.
      const size_t budget = std::max<size_t>(
          2, o.max_points_per_series * segment.size() / std::max<size_t>(total, 1));
      busbw.series.push_back({.label = label,
                              .color = color,
                              .points = DownsampleMinMax(
                                  SegmentPoints(run.metrics, segment, /*busbw=*/true), budget)});
      time.series.push_back({.label = label,
                             .color = color,
                             .points = DownsampleMinMax(
                                 SegmentPoints(run.metrics, segment, /*busbw=*/false), budget)});
    }
    legend += fmt::format("<span><span class=\"swatch\" style=\"background:{}\"></span>{}</span>",
                          color, EscapeXml(label));
  }
  legend += "</p>\n";

  *out += "<h2>Over time</h2>\n";
  if (ranks.empty()) {
    *out += "<p>No iteration was recorded.</p>\n";
    return;
  }
  *out += RenderSvgChart(busbw);
  *out += RenderSvgChart(time);
  *out += legend;
  *out += fmt::format(
      "<p class=\"note\">Shaded: fault windows, from applied to reverted; grey: the job was down "
      "(failed, until its relaunch reported). Lines break where a rank recorded nothing for over "
      "a second. Dashed verticals: phase starts. Each line holds at most {} points per rank: every "
      "run of iterations keeps "
      "its fastest and its slowest, so no spike or stall is hidden.</p>\n",
      o.max_points_per_series);
}

}  // namespace fdrill

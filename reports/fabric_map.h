// Where it hurt, drawn (report.html): the physical map of the fabric — its
// switches (inventory.json's, on the emulated fabric: leaves, spines and
// their uplinks), the nodes and each node's links — coloured by what each
// link did while one fault was on, and a link x time heat map of every
// link's traffic with the fault windows and anomalies marked. Inline SVG
// only, as svg_plot.h: no script, nothing fetched. Pure.
//
// Colours: a link's traffic over the baseline's (the fault window's mean
// tx rate / the baseline phase's) from white (nothing sent) to blue (as
// usual); red where its error-class counters rose (reports/localise.h's
// signal 1) at either end of the cable; the culprit drawn thick and
// labelled. Switch-to-switch links are drawn grey, dashed, unless the
// culprit is one of their ends (a switch's agent samples its ports only
// while a fault names that switch).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reports/localise.h"
#include "reports/run_data.h"
#include "reports/summary.h"

namespace fdrill {

// Maps of more nodes than this are left out (a note says so): a drawing of
// a thousand nodes shows nothing; the Links table and heat map still list
// the links that matter.
inline constexpr size_t kMapMaxNodes = 64;
// The heat map shows at most this many links: those with evidence first,
// then the busiest.
inline constexpr size_t kHeatMapMaxLinks = 96;

// What a map draws, the same for every fault: every (node, link) of
// s.links but a switch's, in the plan's node order, and their nodes, each
// once in that order. Computed once per report (n log n in the links), not
// once per fault.
struct FabricMapLinks {
  std::vector<std::pair<std::string, std::string>> links;  // (node, link)
  std::vector<std::string> nodes;
};
FabricMapLinks MapLinks(const Summary& s, const RunData& run);

// One <svg> of the fabric while FAULT was on (or, past kMapMaxNodes, the
// note saying so), drawing LINKS = MapLinks(s, run).
std::string RenderFabricMap(const Summary& s, const RunData& run, const CounterIndex& counters,
                            const FaultStats& fault, const FabricMapLinks& links);
// The same, computing MapLinks itself.
std::string RenderFabricMap(const Summary& s, const RunData& run, const CounterIndex& counters,
                            const FaultStats& fault);

// One <svg>: rows = links, columns = time from x_min to x_max (seconds).
std::string RenderHeatMap(const Summary& s, const CounterIndex& counters, double x_min,
                          double x_max);

// White (0) to blue (>= 1) for a traffic ratio; exposed for tests.
std::string TrafficColour(double ratio);

}  // namespace fdrill

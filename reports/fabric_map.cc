#include "reports/fabric_map.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/analysis.h"
#include "reports/link_stats.h"
#include "reports/xml_text.h"

namespace fdrill {

namespace {

using LinkKey = std::pair<std::string, std::string>;  // (node, link)

std::string Esc(std::string_view s) { return EscapeXml(s); }

// Mean Gbit/s a link sent over [from, to]; nullopt without samples there.
std::optional<double> MeanTx(const CounterIndex& counters, const LinkKey& l, double from,
                             double to) {
  const auto& all = counters.series();
  auto it = all.find({l.first, l.second + "." + TxCounterOf(l.second)});
  if (it == all.end() || to <= from || it->second.front().first > from) return std::nullopt;
  return CounterIncrease(it->second, from, to) * 8 / (to - from) / 1e9;
}

double FaultEnd(const FaultStats& f, const Summary& s) {
  if (f.reverted_at_s) return *f.reverted_at_s;
  double end = f.applied_at_s;
  for (const PhaseStats& p : s.phases) end = std::max(end, p.end_s);
  return end;
}

struct Box {
  double x = 0, y = 0, w = 0, h = 0;
  double cx() const { return x + w / 2; }
};

}  // namespace

std::string TrafficColour(double ratio) {
  const double r = std::clamp(std::isfinite(ratio) ? ratio : 0.0, 0.0, 1.0);
  // #ffffff -> #1d4ed8
  auto mix = [&](int from, int to) {
    return static_cast<int>(std::lround(from + (to - from) * r));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(0xff, 0x1d), mix(0xff, 0x4e), mix(0xff, 0xd8));
}

// A switch's ports (sampled by its agent when a fault named it) are drawn
// as the cables they end, not as nodes.
FabricMapLinks MapLinks(const Summary& s, const RunData& run) {
  std::map<std::string, size_t> order;
  for (size_t i = 0; i < run.plan.nodes.size(); ++i) order[run.plan.nodes[i]] = i;
  std::set<std::string> switches;
  for (const InventorySwitch& sw : run.switches) switches.insert(sw.name);
  // (plan position, link): the position looked up once per link, not per
  // comparison.
  std::vector<std::pair<size_t, LinkKey>> keyed;
  for (const LinkStats& l : s.links) {
    if (switches.count(l.node)) continue;
    auto at = order.find(l.node);
    keyed.push_back({at != order.end() ? at->second : order.size(), {l.node, l.link}});
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second < b.second;
  });
  FabricMapLinks out;
  std::set<std::string> seen;
  for (auto& [position, key] : keyed) {
    if (seen.insert(key.first).second) out.nodes.push_back(key.first);
    out.links.push_back(std::move(key));
  }
  return out;
}

std::string RenderFabricMap(const Summary& s, const RunData& run, const CounterIndex& counters,
                            const FaultStats& f) {
  return RenderFabricMap(s, run, counters, f, MapLinks(s, run));
}

std::string RenderFabricMap(const Summary& s, const RunData& run, const CounterIndex& counters,
                            const FaultStats& f, const FabricMapLinks& map_links) {
  const std::vector<LinkKey>& links = map_links.links;
  const std::vector<std::string>& nodes = map_links.nodes;
  if (nodes.empty()) return "";
  if (nodes.size() > kMapMaxNodes) {
    return fmt::format(
        "<p class=\"note\">{} nodes: too many to draw; the Links table and the heat map list the "
        "links that matter.</p>\n",
        nodes.size());
  }
  const double to = FaultEnd(f, s);
  const LocaliseWindow w{.from_s = f.applied_at_s,
                         .to_s = to,
                         .ref_from_s = s.baseline.start_s,
                         .ref_to_s = s.baseline.end_s};
  std::map<LinkKey, LinkEvidence> evidence;
  for (const LinkEvidence& e : LinkEvidenceIn(counters, w)) evidence[{e.node, e.link}] = e;

  // Rows: spines, leaves (every switch that is not a spine), nodes.
  std::vector<const InventorySwitch*> spines, leaves;
  for (const InventorySwitch& sw : run.switches)
    (sw.role == "spine" ? spines : leaves).push_back(&sw);
  const double width = 1100, node_w = std::min(120.0, width / nodes.size() - 10);
  const double height = spines.empty() ? 250 : 340;
  const double node_y = height - 60, leaf_y = node_y - 130, spine_y = 20;
  std::map<std::string, Box> boxes;
  auto place = [&](const std::vector<std::string>& names, double y, double w_each) {
    const double step = width / names.size();
    for (size_t i = 0; i < names.size(); ++i) {
      boxes[names[i]] = {.x = step * i + (step - w_each) / 2, .y = y, .w = w_each, .h = 34};
    }
  };
  place(nodes, node_y, node_w);
  std::vector<std::string> leaf_names, spine_names;
  for (const InventorySwitch* sw : leaves) leaf_names.push_back(sw->name);
  for (const InventorySwitch* sw : spines) spine_names.push_back(sw->name);
  if (leaf_names.empty()) leaf_names.push_back("fabric");  // a real cluster: no switches known
  place(leaf_names, leaf_y, std::min(140.0, width / leaf_names.size() - 10));
  if (!spine_names.empty())
    place(spine_names, spine_y, std::min(140.0, width / spine_names.size() - 10));

  std::string out = fmt::format(
      "<svg class=\"chart map\" viewBox=\"0 0 {} {}\" "
      "width=\"{}\" height=\"{}\" role=\"img\" data-fault=\"{}\"><title>The fabric while {} was "
      "on</title>\n",
      width, height, width, height, Esc(f.id), Esc(f.id));
  // Where each node link meets a switch: the leaf port cabled to it.
  std::map<LinkKey, std::string> leaf_of;
  std::map<LinkKey, LinkKey> port_of;  // node link -> the leaf port at its other end
  for (const InventorySwitch* sw : leaves) {
    for (const InventoryPort& p : sw->ports) {
      const auto node_end = p.FarEnd();
      if (!node_end) continue;
      leaf_of[*node_end] = sw->name;
      port_of[*node_end] = {sw->name, p.name};
    }
  }
  auto names = [&](const LinkKey& k) {
    return f.localisation && f.localisation->node == k.first && f.localisation->link == k.second;
  };
  // Spine to leaf: drawn grey and dashed — red and thick when the culprit
  // is either end of it (a switch's agent samples its ports while a fault
  // names the switch).
  for (const InventorySwitch* sw : spines) {
    for (const InventoryPort& p : sw->ports) {
      const std::string leaf = p.to.substr(0, p.to.find(':'));
      if (!boxes.count(leaf)) continue;
      const Box& a = boxes[sw->name];
      const Box& b = boxes[leaf];
      const auto leaf_end = p.FarEnd();
      const bool culprit = names({sw->name, p.name}) || (leaf_end && names(*leaf_end));
      out += fmt::format(
          "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
          "stroke-width=\"{}\"{}><title>{} {} - {}{}</title></line>\n",
          a.cx(), a.y + a.h, b.cx(), b.y, culprit ? "#dc2626" : "#9ca3af", culprit ? 7 : 2,
          culprit ? "" : " stroke-dasharray=\"5 4\"", Esc(sw->name), Esc(p.name), Esc(p.to),
          culprit ? " (the culprit)" : "");
    }
  }
  // Node links, each its own offset along the node's top edge.
  std::map<std::string, int> per_node, seen_on_node;
  for (const auto& l : links) ++per_node[l.first];
  for (const auto& l : links) {
    const Box& n = boxes[l.first];
    const int i = seen_on_node[l.first]++;
    const double x = n.x + n.w * (i + 1) / (per_node[l.first] + 1);
    const std::string leaf = leaf_of.count(l) ? leaf_of[l] : leaf_names.front();
    const Box& sw = boxes[leaf];
    const std::optional<double> base = MeanTx(counters, l, s.baseline.start_s, s.baseline.end_s);
    const std::optional<double> during = MeanTx(counters, l, f.applied_at_s, to);
    const double ratio = base && during && *base > 0 ? *during / *base : 1;
    // The cable: the node's end or the leaf port's.
    const auto port = port_of.find(l);
    const bool culprit = names(l) || (port != port_of.end() && names(port->second));
    auto ev = evidence.find(l);
    if (ev == evidence.end() && port != port_of.end()) ev = evidence.find(port->second);
    // A link whose traffic fell below half its baseline is drawn dashed
    // (white on white would vanish), at least a fifth of the way to blue.
    // Red for a counter that really rose above its baseline; retransmissions
    // alone (judged against the link's baseline share: localise.cc) amber.
    std::string colour = ev == evidence.end()      ? TrafficColour(std::max(ratio, 0.2))
                         : ev->second.retrans_only ? "#d97706"
                                                   : "#dc2626";
    const char* dash = ev == evidence.end() && ratio < 0.5 ? " stroke-dasharray=\"6 4\"" : "";
    std::string tip = fmt::format("{} {}: tx {} -> {} Gbit/s", l.first, l.second,
                                  base ? fmt::format("{:.3g}", *base) : "?",
                                  during ? fmt::format("{:.3g}", *during) : "?");
    if (ev != evidence.end()) {
      const LinkEvidence& e = ev->second;
      tip += "; " + (e.node != l.first ? e.node + " " + e.link + ": " : std::string()) +
             fmt::format("{}", fmt::join(e.rises, ", "));
    }
    out += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-width=\"{}\" data-link=\"{} {}\"{}><title>{}</title></line>\n",
        x, n.y, sw.cx(), sw.y + sw.h, colour, culprit ? 7 : (ev != evidence.end() ? 4 : 3),
        Esc(l.first), Esc(l.second), dash, Esc(tip));
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\">{}</text>\n", x,
        n.y - 4, Esc(l.second));
    if (culprit) {
      out += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" font-weight=\"bold\" fill=\"#b91c1c\" "
          "text-anchor=\"middle\">culprit ({})</text>\n",
          (x + sw.cx()) / 2, (n.y + sw.y + sw.h) / 2, Esc(f.localisation->confidence));
    }
  }
  for (const auto& [name, b] : boxes) {
    const bool is_node = std::find(nodes.begin(), nodes.end(), name) != nodes.end();
    // A node or, named whole (WholeSwitch), a switch.
    const bool culprit_node =
        f.localisation && f.localisation->link.empty() && f.localisation->node == name;
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" rx=\"4\" fill=\"{}\" "
        "stroke=\"{}\" stroke-width=\"{}\"/><text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" "
        "text-anchor=\"middle\">{}</text>\n",
        b.x, b.y, b.w, b.h, is_node ? "#f3f4f6" : "#e5e7eb", culprit_node ? "#b91c1c" : "#6b7280",
        culprit_node ? 3 : 1, b.cx(), b.y + 21, Esc(name));
  }
  out += fmt::format(
      "<text x=\"10\" y=\"{:.0f}\" font-size=\"11\" fill=\"#374151\">Links: blue as usual, "
      "paler as their traffic fell (dashed below half), red where error or drop counters rose; "
      "hover a link for its numbers.</text>\n",
      height - 6);
  out += "</svg>\n";
  return out;
}

std::string RenderHeatMap(const Summary& s, const CounterIndex& counters, double x_min,
                          double x_max) {
  if (s.links.empty() || !(x_max > x_min)) return "";
  struct Row {
    LinkKey key;
    std::vector<RatePoint> rates;
    double base = 0;
    bool evidence = false;
    double bytes = 0;
  };
  std::vector<Row> rows;
  for (const LinkStats& l : s.links) {
    Row r{.key = {l.node, l.link},
          .rates = LinkRates(counters, l.node, l.link, s.baseline.start_s, s.baseline.end_s)};
    if (r.rates.empty()) continue;
    r.base = MeanTx(counters, r.key, s.baseline.start_s, s.baseline.end_s).value_or(0);
    for (const RatePoint& p : r.rates) {
      r.evidence = r.evidence || p.evidence || p.retrans;
      r.bytes += p.gbps * (p.t1 - p.t0);
    }
    rows.push_back(std::move(r));
  }
  if (rows.empty()) return "";
  const size_t total = rows.size();
  if (rows.size() > kHeatMapMaxLinks) {
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return a.evidence != b.evidence ? a.evidence : a.bytes > b.bytes;
    });
    rows.resize(kHeatMapMaxLinks);
  }
  const double label_w = 150, plot_w = 940, row_h = 16, top = 26;
  const double height = top + row_h * rows.size() + 30;
  auto X = [&](double t) { return label_w + (t - x_min) / (x_max - x_min) * plot_w; };
  std::string out = fmt::format(
      "<svg class=\"chart heatmap\" viewBox=\"0 0 {} {:.0f}\" "
      "width=\"{}\" height=\"{:.0f}\" role=\"img\"><title>Each link's traffic over time against "
      "its baseline (white: nothing sent; blue: as usual; amber: TCP retransmitted more of what "
      "it sent than in its baseline; red: an error or drop counter rose)</title>\n",
      label_w + plot_w + 10, height, label_w + plot_w + 10, height);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const double y = top + row_h * i;
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{} {}</text>\n",
        label_w - 6, y + row_h - 4, Esc(r.key.first), Esc(r.key.second));
    for (const RatePoint& p : r.rates) {
      const double a = std::max(p.t0, x_min), b = std::min(p.t1, x_max);
      if (b <= a) continue;
      const double ratio = r.base > 0 ? p.gbps / r.base : (p.gbps > 0 ? 1 : 0);
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\">"
          "<title>{} {} {:.1f}-{:.1f} s: {:.3g} Gbit/s ({:.0f} % of its "
          "baseline){}</title></rect>\n",
          X(a), y, std::max(0.5, X(b) - X(a)), row_h - 2,
          p.evidence ? "#dc2626" : (p.retrans ? "#d97706" : TrafficColour(ratio)), Esc(r.key.first),
          Esc(r.key.second), a, b, p.gbps, 100 * ratio,
          p.evidence ? "; an error or drop counter rose"
                     : (p.retrans ? "; TCP retransmitted more than in its baseline" : ""));
    }
  }
  const double bottom = top + row_h * rows.size();
  for (const FaultStats& f : s.faults) {
    const double a = std::max(f.applied_at_s, x_min), b = std::min(FaultEnd(f, s), x_max);
    if (b <= a) continue;
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"none\" "
        "stroke=\"#f59e0b\" stroke-width=\"2\" data-fault=\"{}\"><title>fault {} ({} on {})"
        "</title></rect><text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" "
        "fill=\"#b45309\">{}</text>\n",
        X(a), top - 2, X(b) - X(a), bottom - top + 2, Esc(f.id), Esc(f.id), Esc(f.kind),
        Esc(f.node), X(a), top - 8, Esc(f.id));
  }
  for (const Anomaly& an : s.anomalies) {
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"none\" "
        "stroke=\"#7c3aed\" stroke-width=\"2\" stroke-dasharray=\"4 3\"><title>anomaly: {}</title>"
        "</rect>\n",
        X(an.start_s), top - 2, X(an.end_s) - X(an.start_s), bottom - top + 2,
        Esc(an.culprit.element));
  }
  for (int i = 0; i <= 10; ++i) {
    const double t = x_min + (x_max - x_min) * i / 10;
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\">{:.0f} s</text>\n",
        X(t), bottom + 16, t);
  }
  out += "</svg>\n";
  if (total > rows.size()) {
    out += fmt::format(
        "<p class=\"note\">{} of {} links shown: those with evidence, then the "
        "busiest.</p>\n",
        rows.size(), total);
  }
  return out;
}

}  // namespace fdrill

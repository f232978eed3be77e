#include "reports/localise.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "reports/analysis.h"
#include "reports/stats.h"

namespace fdrill {

namespace {

// "fab0.qdisc_drops" -> ("fab0", "qdisc_drops"); "ib/mlx5_0/1.symbol_error"
// -> ("ib/mlx5_0/1", "symbol_error"). The link part never holds a dot.
std::pair<std::string, std::string> SplitKey(const std::string& key) {
  const size_t dot = key.find('.');
  if (dot == std::string::npos) return {key, ""};
  return {key.substr(0, dot), key.substr(dot + 1)};
}

bool Contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// How much a counter rose in the window beyond what its reference rate
// predicts; 0 when it did not rise clearly (fewer than 3x the expected
// count, or less than one event more).
struct Excess {
  double rise = 0;
  double expected = 0;
  double excess = 0;
};

Excess ExcessOf(const CounterIndex::Series& s, const LocaliseWindow& w) {
  Excess out;
  // A counter needs a sample at or before the window's start to say what
  // changed in it.
  if (s.empty() || s.front().first > w.from_s) return out;
  out.rise = CounterIncrease(s, w.from_s, w.to_s);
  if (w.ref_to_s > w.ref_from_s && s.front().first <= w.ref_from_s) {
    const double rate = CounterIncrease(s, w.ref_from_s, w.ref_to_s) / (w.ref_to_s - w.ref_from_s);
    out.expected = rate * (w.to_s - w.from_s);
  }
  if (out.rise - out.expected >= 1 && out.rise >= 3 * out.expected) {
    out.excess = out.rise - out.expected;
  }
  return out;
}

std::string Rise(const std::string& counter, const Excess& e) {
  if (e.expected < 0.5) return fmt::format("{} +{:g}", counter, e.rise);
  return fmt::format("{} +{:g} (~{:.0f} expected at the baseline's rate)", counter, e.rise,
                     e.expected);
}

struct Candidate {
  std::string node, link;
  double score = 0;
  std::vector<std::string> rises;
};

// Signal 1: per (node, link), the weighted excess of its error counters.
std::vector<Candidate> LinkCandidates(const CounterIndex& counters, const LocaliseWindow& w) {
  std::map<std::pair<std::string, std::string>, Candidate> by_link;
  for (const auto& [key, s] : counters.series()) {
    const auto [link, counter] = SplitKey(key.second);
    if (link == "tcp") continue;
    const double weight = LinkEvidenceWeight(counter);
    if (weight <= 0) continue;
    const Excess e = ExcessOf(s, w);
    if (e.excess <= 0) continue;
    Candidate& c = by_link[{key.first, link}];
    c.node = key.first;
    c.link = link;
    c.score += weight * e.excess;
    c.rises.push_back(Rise(counter, e));
  }
  std::vector<Candidate> out;
  for (auto& [k, c] : by_link) out.push_back(std::move(c));
  std::stable_sort(out.begin(), out.end(),
                   [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  return out;
}

// Signal 2: per node, retransmissions and timeouts above the reference.
std::vector<Candidate> TransportCandidates(const CounterIndex& counters, const LocaliseWindow& w) {
  std::map<std::string, Candidate> by_node;
  for (const auto& [key, s] : counters.series()) {
    const auto [link, counter] = SplitKey(key.second);
    if (link != "tcp") continue;
    double weight = 0;
    if (counter == "retrans_segs") weight = 1;
    if (counter == "timeouts") weight = 10;
    if (weight <= 0) continue;
    const Excess e = ExcessOf(s, w);
    if (e.excess <= 0) continue;
    Candidate& c = by_node[key.first];
    c.node = key.first;
    c.score += weight * e.excess;
    c.rises.push_back(Rise("TCP " + counter, e));
  }
  std::vector<Candidate> out;
  for (auto& [k, c] : by_node) out.push_back(std::move(c));
  std::stable_sort(out.begin(), out.end(),
                   [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  return out;
}

// Per rank, the median wait in the line-up over the iterations overlapping
// [from, to); with its node.
std::map<int, std::pair<double, std::string>> MedianWaits(const std::vector<Iteration>& series,
                                                          double from, double to) {
  std::map<int, std::vector<double>> waits;
  std::map<int, std::string> nodes;
  for (const Iteration* it : Overlapping(series, from, to)) {
    for (const RankSample& r : it->ranks) {
      waits[r.rank].push_back(r.wait_ms);
      nodes[r.rank] = r.node;
    }
  }
  std::map<int, std::pair<double, std::string>> out;
  for (auto& [rank, v] : waits) out[rank] = {Median(std::move(v)).value_or(0), nodes[rank]};
  return out;
}

struct RankEvidence {
  int rank = 0;
  std::string node;
  double gap_ms = 0;      // the others' median wait minus its own, in the window
  double ref_gap_ms = 0;  // the same in the reference
  double iter_ms = 0;
};

// Signal 3: the rank its peers waited for. Clear when the others' median
// wait exceeds its own by at least 2 ms and a fifth of an iteration, and by
// more than twice what it did in the reference.
std::optional<RankEvidence> LastToArrive(const std::vector<Iteration>& series,
                                         const LocaliseWindow& w) {
  const auto in = MedianWaits(series, w.from_s, w.to_s);
  if (in.size() < 2) return std::nullopt;
  const auto least = std::min_element(in.begin(), in.end(), [](const auto& a, const auto& b) {
    return a.second.first < b.second.first;
  });
  auto gap_of = [&](const std::map<int, std::pair<double, std::string>>& waits) {
    std::vector<double> others;
    double own = 0;
    for (const auto& [rank, v] : waits) {
      if (rank == least->first) {
        own = v.first;
      } else {
        others.push_back(v.first);
      }
    }
    return Median(std::move(others)).value_or(0) - own;
  };
  RankEvidence e{.rank = least->first, .node = least->second.second, .gap_ms = gap_of(in)};
  if (w.ref_to_s > w.ref_from_s) {
    const auto ref = MedianWaits(series, w.ref_from_s, w.ref_to_s);
    if (ref.count(e.rank) != 0) e.ref_gap_ms = std::max(0.0, gap_of(ref));
  }
  e.iter_ms = Median(TimeMsOf(Overlapping(series, w.from_s, w.to_s))).value_or(0);
  const bool clear = e.gap_ms >= 2 && e.gap_ms >= 0.2 * e.iter_ms && e.gap_ms > 2 * e.ref_gap_ms;
  if (!clear) return std::nullopt;
  return e;
}

std::string RankWords(const RankEvidence& r) {
  return fmt::format(
      "rank {} ({}) entered the collective last: the others waited {:.1f} ms more for it "
      "(median), {:.1f} ms in the baseline",
      r.rank, r.node, r.gap_ms, r.ref_gap_ms);
}

}  // namespace

double LinkEvidenceWeight(const std::string& c) {
  if (c == "carrier_changes" || c == "link_downed") return 1000;
  if (c == "symbol_error" || c == "link_error_recovery" || c == "port_rcv_errors" ||
      c.starts_with("dl_") || c.ends_with("_errors")) {
    return 10;
  }
  if (c.ends_with("_dropped") || Contains(c, "discards") || c == "qdisc_drops" ||
      c == "qdisc_overlimits") {
    return 1;
  }
  return 0;
}

CounterIndex::CounterIndex(const std::vector<Event>& events) {
  for (const Event& e : events) {
    if (e.type == "counters") Add(e);
  }
}

void CounterIndex::Add(const Event& e) {
  for (const auto& [name, value] : e.counters) series_[{e.node, name}].push_back({e.t, value});
}

std::optional<Culprit> Localise(const CounterIndex& counters, const std::vector<Iteration>& series,
                                const LocaliseWindow& w) {
  if (!(w.to_s > w.from_s)) return std::nullopt;
  const std::vector<Candidate> links = LinkCandidates(counters, w);
  const std::vector<Candidate> transport = TransportCandidates(counters, w);
  const std::optional<RankEvidence> last = LastToArrive(series, w);
  auto transport_words = [&](const std::string& node) -> std::optional<std::string> {
    for (const Candidate& c : transport) {
      if (c.node == node) return node + ": " + fmt::format("{}", fmt::join(c.rises, ", "));
    }
    return std::nullopt;
  };

  Culprit out;
  if (!links.empty()) {
    const Candidate& top = links.front();
    out.element = "link " + top.node + " " + top.link;
    out.node = top.node;
    out.link = top.link;
    out.link_rises = fmt::format("{}", fmt::join(top.rises, ", "));
    out.evidence.push_back(top.node + " " + top.link + ": " + out.link_rises);
    const bool alone = links.size() == 1 || top.score >= 3 * links[1].score;
    if (!alone) {
      out.evidence.push_back(fmt::format("also {} {}: {}", links[1].node, links[1].link,
                                         fmt::join(links[1].rises, ", ")));
    }
    if (auto t = transport_words(top.node)) out.evidence.push_back(*t);
    // Which rank arrives last under a link fault depends on the
    // collective's order (a ring stalls the link's neighbours), so a rank
    // elsewhere is reported but does not weaken the link's evidence.
    if (last) {
      if (last->node == top.node) {
        out.rank = last->rank;
        out.evidence.push_back(RankWords(*last));
      } else {
        out.evidence.push_back(RankWords(*last) +
                               " (a slow link also stalls the ranks that wait on it)");
      }
    }
    out.confidence = alone ? "high" : "medium";
    return out;
  }
  if (last) {
    out.element = fmt::format("rank {} ({})", last->rank, last->node);
    out.node = last->node;
    out.rank = last->rank;
    out.evidence.push_back(RankWords(*last));
    out.evidence.push_back("no link counter rose beyond its baseline rate");
    if (auto t = transport_words(last->node)) out.evidence.push_back(*t);
    out.confidence = last->gap_ms >= 0.5 * last->iter_ms ? "high" : "medium";
    return out;
  }
  if (!transport.empty()) {
    const Candidate& top = transport.front();
    out.element = "node " + top.node;
    out.node = top.node;
    out.evidence.push_back(*transport_words(top.node));
    out.evidence.push_back(
        "no link counter rose and no rank arrived last: a node also retransmits toward a broken "
        "peer, so this may be the far end");
    out.confidence = "low";
    return out;
  }
  return std::nullopt;
}

}  // namespace fdrill

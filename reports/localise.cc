#include "reports/localise.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/core/stats.h"
#include "reports/analysis.h"
#include "reports/rank_evidence.h"
#include "reports/whole_switch.h"

namespace fdrill {

std::pair<std::string, std::string> SplitCounterKey(const std::string& key) {
  const auto [link, counter] = SplitCounterName(key);
  return {std::string(link), std::string(counter)};
}

namespace {

bool Contains(std::string_view s, const char* part) { return s.find(part) != s.npos; }

// How much a counter rose in the window beyond what its reference rate
// predicts; 0 when it did not rise clearly (fewer than 3x the expected
// count, or less than one event more).
struct Excess {
  double rise = 0;
  double expected = 0;
  double excess = 0;
  bool by_share = false;  // expected from the reference's share of what the link sent
};

// A rise counts when it is at least one event and three times what was
// expected: its excess over that, else 0.
void Judge(Excess& e) {
  e.excess = e.rise - e.expected >= 1 && e.rise >= 3 * e.expected ? e.rise - e.expected : 0;
}

Excess ExcessOf(const CounterIndex::Series& s, const LocaliseWindow& w) {
  Excess out;
  // A counter needs a sample at or before the window's start to say what
  // changed in it.
  if (s.empty() || s.front().first > w.from_s) return out;
  out.rise = CounterIncrease(s, w.from_s, w.to_s);
  if (w.ref_to_s > w.ref_from_s && s.front().first <= w.ref_from_s) {
    const double rate = CounterIncrease(s, w.ref_from_s, w.ref_to_s) / (w.ref_to_s - w.ref_from_s);
    // Expected over the time the rise spans, from the last sample at or
    // before the window's start to the last at or before its end, not over
    // the window: pushed once a second, a window a fraction of a second old
    // holds a whole second's rise (the live view named a link on a second
    // of the baseline's retransmissions 0.0-0.3 s into a fault).
    out.expected =
        rate * (LastSampleAtOrBefore(s, w.to_s)->first - LastSampleAtOrBefore(s, w.from_s)->first);
  }
  Judge(out);
  return out;
}

// A link's TCP retransmissions against the share of what it sent that it
// retransmitted in the reference: loss can collapse what a link sends, so
// that it retransmits fewer segments a second than in a baseline where a
// shaped fabric drops some, while resending a far larger share of what it
// sends (link_loss 10 % on the flat emulated fabric: ~1,000 a second
// against the baseline's 2,000-3,000, ~10 % of what it sent against ~1 %;
// named a rank before this). Counted between the window's first and last
// samples, not from the last one before it: pushed once a second, that
// one carries up to a second of the traffic before the fault, at full
// rate. The larger excess of this and ExcessOf's.
Excess RetransExcessOf(const CounterIndex& counters, const CounterIndex::Key& key,
                       const CounterIndex::Series& s, std::string_view link,
                       const LocaliseWindow& w) {
  const Excess by_rate = ExcessOf(s, w);
  if (s.empty() || !(w.ref_to_s > w.ref_from_s) || s.front().first > w.ref_from_s) return by_rate;
  const auto& all = counters.series();
  auto tx = all.find({key.first, std::string(link) + ".tx_bytes"});
  if (tx == all.end() || tx->second.empty() || tx->second.front().first > w.ref_from_s) {
    return by_rate;
  }
  const double ref_tx = CounterIncrease(tx->second, w.ref_from_s, w.ref_to_s);
  auto first = std::lower_bound(s.begin(), s.end(), w.from_s,
                                [](const auto& x, double t) { return x.first < t; });
  const std::pair<double, double>* last = LastSampleAtOrBefore(s, w.to_s);
  if (!(ref_tx > 0) || first == s.end() || last == nullptr) return by_rate;
  const double from = first->first, to = last->first;
  if (!(to > from)) return by_rate;
  Excess out{.rise = CounterIncrease(s, from, to), .by_share = true};
  out.expected =
      CounterIncrease(s, w.ref_from_s, w.ref_to_s) * CounterIncrease(tx->second, from, to) / ref_tx;
  Judge(out);
  return out.excess > by_rate.excess ? out : by_rate;
}

std::string Rise(std::string_view counter, const Excess& e) {
  if (e.expected < 0.5) return fmt::format("{} +{:g}", counter, e.rise);
  return fmt::format("{} +{:g} (~{:.0f} expected at the baseline's {})", counter, e.rise,
                     e.expected, e.by_share ? "share of what it sent" : "rate");
}

using Candidate = LinkEvidence;

// A link's retransmitted segments count as its evidence from this many
// above the reference: a healthy link retransmits a few now and then (a
// tail loss probe, a reordered ACK), a lossy one thousands a second.
constexpr double kMinRetransExcess = 50;

double MinExcess(std::string_view counter) {
  return counter == "tcp_retrans_segs" ? kMinRetransExcess : 1;
}

}  // namespace

namespace {

// Signal 1: per (node, link), the weighted excess of its error counters,
// the strongest first; the words of what rose (Rise) only for the first
// DETAILED links: Localise reads two of them, once per fault, out of as
// many links as a fault window overlaps.
std::vector<Candidate> ScoreLinks(const CounterIndex& counters, const LocaliseWindow& w,
                                  size_t detailed) {
  struct Scored {
    Candidate c;
    std::vector<std::pair<std::string_view, Excess>> rose;  // (counter, excess)
  };
  std::map<std::pair<std::string, std::string>, Scored> by_link;
  for (const auto& [key, s] : counters.changing()) {
    const auto [link, counter] = SplitCounterName(key.second);
    if (link == "tcp" || link.starts_with("rank/")) continue;
    // bench/localisation.sh named link_loss's own veth in windows that
    // began after it existed.
    if (FdrillOwnDevice(link)) continue;
    const double weight = LinkEvidenceWeight(counter);
    if (weight <= 0) continue;
    const Excess e = counter == "tcp_retrans_segs" ? RetransExcessOf(counters, key, *s, link, w)
                                                   : ExcessOf(*s, w);
    if (e.excess < MinExcess(counter)) continue;  // 0 when it did not rise clearly
    Scored& scored = by_link[{key.first, std::string(link)}];
    Candidate& c = scored.c;
    c.node = key.first;
    c.link = link;
    c.score += weight * e.excess;
    scored.rose.push_back({counter, e});
    c.retrans_only = c.retrans_only && counter == "tcp_retrans_segs";
  }
  std::vector<Scored*> order;
  for (auto& [k, scored] : by_link) order.push_back(&scored);
  std::stable_sort(order.begin(), order.end(),
                   [](const Scored* a, const Scored* b) { return a->c.score > b->c.score; });
  std::vector<Candidate> out;
  out.reserve(order.size());
  for (Scored* scored : order) {
    if (out.size() < detailed) {
      for (const auto& [counter, e] : scored->rose) scored->c.rises.push_back(Rise(counter, e));
    }
    out.push_back(std::move(scored->c));
  }
  return out;
}

}  // namespace

std::vector<LinkEvidence> LinkEvidenceIn(const CounterIndex& counters, const LocaliseWindow& w) {
  return ScoreLinks(counters, w, std::numeric_limits<size_t>::max());
}

namespace {

// Signal 2: per node, retransmissions and timeouts above the reference.
std::vector<Candidate> TransportCandidates(const CounterIndex& counters, const LocaliseWindow& w) {
  std::map<std::string, Candidate> by_node;
  for (const auto& [key, s] : counters.changing()) {
    const auto [link, counter] = SplitCounterName(key.second);
    if (link != "tcp") continue;
    double weight = 0;
    if (counter == "retrans_segs") weight = 1;
    if (counter == "timeouts") weight = 10;
    if (weight <= 0) continue;
    const Excess e = ExcessOf(*s, w);
    if (e.excess <= 0) continue;
    Candidate& c = by_node[key.first];
    c.node = key.first;
    c.score += weight * e.excess;
    c.rises.push_back(Rise("TCP " + std::string(counter), e));
  }
  std::vector<Candidate> out;
  for (auto& [k, c] : by_node) out.push_back(std::move(c));
  std::stable_sort(out.begin(), out.end(),
                   [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  return out;
}

// The share of what a link sent in the window that TCP sent again: its
// retransmitted segments x a 1500-byte MTU's MSS over its tx_bytes (with a
// larger MTU the share reads low: a conservative estimate). nullopt without
// both counters. A lossy link resends percents (link_loss 10 % of
// super-packets: 3-5 %); a stopped receiver's senders a tenth of a percent
// (rank_pause: <= 0.12 % in bench/localisation.sh).
constexpr double kMss = 1448;
constexpr double kLossyShare = 0.005;
std::optional<double> RetransShare(const CounterIndex& counters, const std::string& node,
                                   const std::string& link, const LocaliseWindow& w) {
  const auto& all = counters.series();
  auto retrans = all.find({node, link + ".tcp_retrans_segs"});
  auto tx = all.find({node, link + ".tx_bytes"});
  if (retrans == all.end() || tx == all.end() || tx->second.empty() ||
      tx->second.front().first > w.from_s) {
    return std::nullopt;
  }
  const double sent = CounterIncrease(tx->second, w.from_s, w.to_s);
  if (!(sent > 0)) return std::nullopt;
  return CounterIncrease(retrans->second, w.from_s, w.to_s) * kMss / sent;
}

// What the links showed when a rank is named: nothing, or only
// retransmissions (the rank's stalled receive buffers explain them).
std::string NoLinkWords(const std::vector<Candidate>& links) {
  if (links.empty()) return "no link counter rose beyond its baseline rate";
  return fmt::format(
      "only TCP retransmissions rose ({} {}: {}): a stopped receiver makes its senders "
      "retransmit too",
      links.front().node, links.front().link, fmt::join(links.front().rises, ", "));
}

}  // namespace

bool FdrillOwnDevice(std::string_view link) { return link.starts_with("fdrill"); }

double LinkEvidenceWeight(std::string_view c) {
  if (c == "carrier_changes" || c == "link_downed") return 1000;
  if (c == "symbol_error" || c == "link_error_recovery" || c == "port_rcv_errors" ||
      c.starts_with("dl_") || c.ends_with("_errors")) {
    return 10;
  }
  if (c.ends_with("_dropped") || Contains(c, "discards") || c == "qdisc_drops" ||
      c == "qdisc_overlimits") {
    return 1;
  }
  // The sender's inference about its path, not a count of the element's
  // own: a switch port's drops toward a node outweigh what the node's
  // peer retransmitted on account of them.
  if (c == "tcp_retrans_segs") return 0.1;
  return 0;
}

std::optional<Culprit> Localise(const CounterIndex& counters, const std::vector<Iteration>& series,
                                const LocaliseWindow& w,
                                const std::vector<InventorySwitch>& switches) {
  if (!(w.to_s > w.from_s)) return std::nullopt;
  // Only the first two links' rises are read below.
  const std::vector<Candidate> links = ScoreLinks(counters, w, 2);
  const std::vector<Candidate> transport = TransportCandidates(counters, w);
  const std::optional<RankEvidence> last = LastToArrive(series, w);
  bool cpu_sampled = false;
  std::optional<CpuEvidence> starved = StarvedRank(counters, w, &cpu_sampled);
  if (starved && starved->inside < kMinInside && !(last && last->rank == starved->rank)) {
    starved.reset();
  }
  auto transport_words = [&](const std::string& node) -> std::optional<std::string> {
    for (const Candidate& c : transport) {
      if (c.node == node) return node + ": " + fmt::format("{}", fmt::join(c.rises, ", "));
    }
    return std::nullopt;
  };

  Culprit out;
  // A stopped or starved rank explains its peers' retransmissions (its
  // receive buffers fill). A rank that merely arrived last does too, unless
  // the ranks' CPU time was sampled, none was short of it, and the link
  // resent a lossy link's share of what it sent: a lossy link makes its
  // sender retransmit and stalls the neighbours that wait on it
  // (bench/localisation.sh: link_loss on n0 named rank 1 before this), while
  // a stopped rank's CPU signal can miss a short window and its senders
  // resend little.
  const bool retrans_only = !links.empty() && links.front().retrans_only;
  // The share of what the top link sent that it resent: unknown without
  // its tx_bytes.
  std::optional<double> share;
  if (retrans_only && !starved)
    share = RetransShare(counters, links.front().node, links.front().link, w);
  const bool lossy = last && cpu_sampled && share && *share >= kLossyShare;
  const bool rank_explains = retrans_only && (starved || (last && !lossy));
  // Retransmissions alone that no rank explains, at a share a lossy link
  // does not resend (a busy host's senders resend 0.1-0.5 %: cpu_hog on
  // the emulated fabric, where no rank ran last): the link is named, at
  // low confidence, saying so.
  const bool thin = retrans_only && !rank_explains && share && *share < kLossyShare;
  // Retransmissions alone before any rank's CPU time was measured inside
  // the window (a live view's first second of a fault): a stopped rank's
  // senders resend as a lossy link's do (1.6-2.9 % of what they send in
  // that second on the emulated fabric, README), and the CPU signal that
  // tells them apart cannot speak yet. The link is named, at low confidence.
  const bool cpu_young =
      retrans_only && !rank_explains && cpu_sampled && !CpuMeasuredInside(counters, w);
  if (!links.empty() && !rank_explains) {
    const Candidate& top = links.front();
    out.element = "link " + top.node + " " + top.link;
    out.node = top.node;
    out.link = top.link;
    out.link_rises = fmt::format("{}", fmt::join(top.rises, ", "));
    out.evidence.push_back(top.node + " " + top.link + ": " + out.link_rises);
    const bool alone = links.size() == 1 || top.score >= 3 * links[1].score;
    if (!alone && !retrans_only) {
      if (auto sw = WholeSwitch(counters, links, switches)) {
        Culprit whole;
        whole.element = "switch " + sw->name;
        whole.node = sw->name;
        whole.evidence.push_back(
            fmt::format("{} cables rose together, every cable of {} that was sampled: {}; the "
                        "element they share is the switch",
                        sw->cables.size(), sw->name, fmt::join(sw->cables, ", ")));
        whole.evidence.push_back(out.evidence.front());  // the strongest link's rises
        if (last) {
          whole.evidence.push_back(RankWords(*last) +
                                   " (a switch that fails stalls the ranks behind it)");
        }
        whole.confidence = "high";
        return whole;
      }
    }
    if (!alone) {
      out.evidence.push_back(fmt::format("also {} {}: {}", links[1].node, links[1].link,
                                         fmt::join(links[1].rises, ", ")));
    }
    if (lossy) {
      out.evidence.push_back(fmt::format(
          "{} {} resent about {:.1f} % of what it sent, and no rank ran short of CPU: loss on the "
          "link, not a stalled receiver",
          top.node, top.link, 100 * *share));
    }
    if (thin) {
      out.evidence.push_back(fmt::format(
          "{} {} resent only {:.2f} % of what it sent: a lossy link resends percents, a busy or "
          "stalled host's senders a few tenths, so the link is a guess",
          top.node, top.link, 100 * *share));
    }
    if (cpu_young) {
      out.evidence.push_back(
          "no rank's CPU time was measured inside this window yet: a stopped rank's senders "
          "resend as a lossy link's do, so the link is a guess until it is");
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
    out.confidence = thin || cpu_young ? "low" : alone ? "high" : "medium";
    return out;
  }
  if (starved) {
    out.element = fmt::format("rank {} ({})", starved->rank, starved->node);
    out.node = starved->node;
    out.rank = starved->rank;
    out.evidence.push_back(CpuWords(*starved));
    const bool agree = last && last->rank == starved->rank;
    if (last) out.evidence.push_back(RankWords(*last) + (agree ? "" : " — another rank"));
    out.evidence.push_back(NoLinkWords(links));
    if (auto t = transport_words(starved->node)) out.evidence.push_back(*t);
    out.confidence = agree || starved->share <= 0.7 ? "high" : "medium";
    return out;
  }
  if (last) {
    out.element = fmt::format("rank {} ({})", last->rank, last->node);
    out.node = last->node;
    out.rank = last->rank;
    out.evidence.push_back(RankWords(*last));
    out.evidence.push_back(NoLinkWords(links));
    if (auto t = transport_words(last->node)) out.evidence.push_back(*t);
    out.confidence = last->caused - last->ref_caused >= 100 && last->caused >= 1.5 * last->next
                         ? "high"
                         : "medium";
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

ClassCulprits LocaliseEachClass(const CounterIndex& counters, const std::vector<Iteration>& series,
                                const LocaliseWindow& w,
                                const std::vector<InventorySwitch>& switches) {
  ClassCulprits out;
  if (!(w.to_s > w.from_s)) return out;
  const std::vector<Candidate> links = ScoreLinks(counters, w, std::numeric_limits<size_t>::max());
  const std::optional<RankEvidence> last = LastToArrive(series, w);
  bool cpu_sampled = false;
  std::optional<CpuEvidence> starved = StarvedRank(counters, w, &cpu_sampled);
  if (starved && starved->inside < kMinInside && !(last && last->rank == starved->rank)) {
    starved.reset();
  }
  // The links whose own counters rose; retransmissions alone say what a
  // node inferred about its whole path, which a stopped rank explains too.
  std::vector<Candidate> own;
  for (const Candidate& c : links) {
    if (!c.retrans_only) own.push_back(c);
  }
  if (!own.empty()) {
    const Candidate& top = own.front();
    const bool alone = own.size() == 1 || top.score >= 3 * own[1].score;
    std::optional<SwitchEvidence> sw;
    if (!alone) sw = WholeSwitch(counters, own, switches);
    Culprit c;
    if (sw) {
      c.element = "switch " + sw->name;
      c.node = sw->name;
      c.evidence.push_back(
          fmt::format("{} cables rose together, every cable of {} that was "
                      "sampled: {}",
                      sw->cables.size(), sw->name, fmt::join(sw->cables, ", ")));
      c.confidence = "high";
    } else {
      c.element = "link " + top.node + " " + top.link;
      c.node = top.node;
      c.link = top.link;
      c.link_rises = fmt::format("{}", fmt::join(top.rises, ", "));
      c.evidence.push_back(top.node + " " + top.link + ": " + c.link_rises);
      if (!alone) {
        c.evidence.push_back(
            fmt::format("also {} {}: {}", own[1].node, own[1].link, fmt::join(own[1].rises, ", ")));
      }
      c.confidence = alone ? "high" : "medium";
    }
    out.link = std::move(c);
  } else if (!links.empty()) {
    // Retransmissions alone: the link's when it resent a lossy link's
    // share of what it sent (a stopped rank's senders resend a tenth of a
    // percent), or when no rank stood out.
    const Candidate& top = links.front();
    const std::optional<double> share = RetransShare(counters, top.node, top.link, w);
    const bool lossy = share && *share >= kLossyShare;
    if (lossy || (!starved && !last)) {
      Culprit c;
      c.element = "link " + top.node + " " + top.link;
      c.node = top.node;
      c.link = top.link;
      c.link_rises = fmt::format("{}", fmt::join(top.rises, ", "));
      c.evidence.push_back(top.node + " " + top.link + ": " + c.link_rises);
      if (lossy) {
        c.evidence.push_back(
            fmt::format("{} {} resent about {:.1f} % of what it sent: loss on "
                        "the link, not a stalled receiver",
                        top.node, top.link, 100 * *share));
      } else {
        c.evidence.push_back("only its TCP retransmissions rose, and no rank stood out");
      }
      c.confidence = lossy ? "medium" : "low";
      out.link = std::move(c);
    }
  }
  if (starved) {
    Culprit c;
    c.element = fmt::format("rank {} ({})", starved->rank, starved->node);
    c.node = starved->node;
    c.rank = starved->rank;
    c.evidence.push_back(CpuWords(*starved));
    const bool agree = last && last->rank == starved->rank;
    if (last) c.evidence.push_back(RankWords(*last) + (agree ? "" : " — another rank"));
    c.confidence = agree || starved->share <= 0.7 ? "high" : "medium";
    out.rank = std::move(c);
    if (starved->ref_share > 0)
      out.rank_held = std::max(0.0, 1 - starved->share / starved->ref_share);
  } else if (last) {
    Culprit c;
    c.element = fmt::format("rank {} ({})", last->rank, last->node);
    c.node = last->node;
    c.rank = last->rank;
    c.evidence.push_back(RankWords(*last));
    c.confidence = last->caused - last->ref_caused >= 100 && last->caused >= 1.5 * last->next
                       ? "high"
                       : "medium";
    out.rank = std::move(c);
    out.rank_held = std::max(0.0, last->caused - last->ref_caused) / 1000;
  }
  return out;
}

}  // namespace fdrill

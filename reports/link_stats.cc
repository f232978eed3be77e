#include "reports/link_stats.h"

#include <algorithm>
#include <map>
#include <set>

#include "reports/analysis.h"

namespace fdrill {

namespace {

enum class Kind { kNone, kDrop, kError, kShaped, kCarrier };

Kind KindOf(const std::string& c) {
  if (c == "carrier_changes" || c == "link_downed") return Kind::kCarrier;
  if (c == "qdisc_overlimits") return Kind::kShaped;
  if (c.ends_with("_dropped") || c.find("discards") != std::string::npos || c == "qdisc_drops") {
    return Kind::kDrop;
  }
  if (c.ends_with("_errors") || c == "symbol_error" || c == "link_error_recovery" ||
      c.starts_with("dl_")) {
    return Kind::kError;
  }
  return Kind::kNone;
}

// From the last sample at or before the phase's start (or the first inside
// it) to the last at or before its end; nullopt when no sample is inside.
std::optional<double> RiseOver(const CounterIndex::Series& s, const PhaseStats& p) {
  bool inside = false;
  for (const auto& x : s) inside = inside || (x.first >= p.start_s && x.first <= p.end_s);
  if (!inside) return std::nullopt;
  const double from = s.front().first > p.start_s ? s.front().first : p.start_s;
  return CounterIncrease(s, from, p.end_s);
}

}  // namespace

std::string TxCounterOf(const std::string& link) {
  return link.starts_with("ib/") ? "port_xmit_data" : "tx_bytes";
}
std::string RxCounterOf(const std::string& link) {
  return link.starts_with("ib/") ? "port_rcv_data" : "rx_bytes";
}

std::vector<LinkStats> AnalyzeLinks(const CounterIndex& counters,
                                    const std::vector<PhaseStats>& phases,
                                    const std::vector<InventorySwitch>& switches) {
  std::map<std::pair<std::string, std::string>, LinkStats> by_link;
  for (const auto& [key, s] : counters.series()) {
    const auto [link, counter] = SplitCounterKey(key.second);
    if (link == "tcp" || link.starts_with("rank/") || counter.empty() || FdrillOwnDevice(link))
      continue;
    LinkStats& l = by_link[{key.first, link}];
    if (l.phases.empty()) {
      l.node = key.first;
      l.link = link;
      for (const PhaseStats& p : phases) l.phases.push_back({.phase = p.name});
    }
    for (size_t i = 0; i < phases.size(); ++i) {
      const std::optional<double> rise = RiseOver(s, phases[i]);
      if (!rise) continue;
      LinkPhase& lp = l.phases[i];
      const double seconds = phases[i].end_s - phases[i].start_s;
      if (counter == TxCounterOf(link) && seconds > 0) lp.tx_gbps = *rise * 8 / seconds / 1e9;
      if (counter == RxCounterOf(link) && seconds > 0) lp.rx_gbps = *rise * 8 / seconds / 1e9;
      switch (KindOf(counter)) {
        case Kind::kDrop:
          lp.drops += *rise;
          break;
        case Kind::kError:
          lp.errors += *rise;
          break;
        case Kind::kShaped:
          lp.shaped += *rise;
          break;
        case Kind::kCarrier:
          lp.carrier_changes += *rise;
          break;
        case Kind::kNone:
          break;
      }
    }
  }
  for (const InventorySwitch& sw : switches) {
    for (const InventoryPort& p : sw.ports) {
      const auto far = p.FarEnd();
      if (!far || p.rate_bps <= 0) continue;
      auto it = by_link.find(*far);
      if (it != by_link.end()) it->second.capacity_gbps = p.rate_bps / 1e9;
    }
  }
  std::vector<LinkStats> out;
  for (auto& [k, l] : by_link) {
    if (l.capacity_gbps) {
      for (LinkPhase& p : l.phases) {
        if (p.tx_gbps) p.utilisation = *p.tx_gbps / *l.capacity_gbps;
      }
    }
    out.push_back(std::move(l));
  }
  return out;
}

std::vector<const LinkStats*> TopLinks(const Summary& s, size_t n) {
  std::vector<std::pair<std::pair<double, double>, const LinkStats*>> scored;
  for (const LinkStats& l : s.links) {
    double evidence = 0, sent = 0;
    for (const LinkPhase& p : l.phases) {
      evidence += p.carrier_changes * 1000 + p.errors * 10 + p.drops + p.shaped;
      sent += p.tx_gbps.value_or(0);
    }
    scored.push_back({{evidence, sent}, &l});
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<const LinkStats*> out;
  for (size_t i = 0; i < scored.size() && i < n; ++i) out.push_back(scored[i].second);
  return out;
}

std::vector<NodeTransport> AnalyzeTransport(const CounterIndex& counters,
                                            const std::vector<PhaseStats>& phases) {
  std::map<std::string, NodeTransport> by_node;
  for (const auto& [key, s] : counters.series()) {
    const auto [group, counter] = SplitCounterKey(key.second);
    if (group != "tcp" || (counter != "retrans_segs" && counter != "timeouts")) continue;
    NodeTransport& n = by_node[key.first];
    if (n.phases.empty()) {
      n.node = key.first;
      for (const PhaseStats& p : phases) n.phases.push_back({.phase = p.name});
    }
    for (size_t i = 0; i < phases.size(); ++i) {
      const std::optional<double> rise = RiseOver(s, phases[i]);
      if (!rise) continue;
      (counter == "timeouts" ? n.phases[i].timeouts : n.phases[i].retrans_segs) += *rise;
    }
  }
  std::vector<NodeTransport> out;
  for (auto& [k, n] : by_node) out.push_back(std::move(n));
  return out;
}

std::vector<RatePoint> LinkRates(const CounterIndex& counters, const std::string& node,
                                 const std::string& link, double ref_from_s, double ref_to_s) {
  std::vector<RatePoint> out;
  const auto& all = counters.series();
  auto tx = all.find({node, link + "." + TxCounterOf(link)});
  if (tx == all.end()) return out;
  // Times at which an error-class counter of the link rose (retransmissions
  // are not one: below).
  std::set<double> evidence;
  for (auto it = all.lower_bound({node, link + "."}); it != all.end() && it->first.first == node;
       ++it) {
    const auto [l, c] = SplitCounterKey(it->first.second);
    if (l != link || c == "tcp_retrans_segs" || LinkEvidenceWeight(c) <= 0) continue;
    for (size_t i = 1; i < it->second.size(); ++i) {
      if (it->second[i].second != it->second[i - 1].second) evidence.insert(it->second[i].first);
    }
  }
  const auto& s = tx->second;
  // Retransmitted segments x a 1500-byte MTU's MSS, as a share of what was
  // sent: in the reference, then in each interval.
  constexpr double kMss = 1448, kMinShare = 0.001;
  const auto retrans = all.find({node, link + ".tcp_retrans_segs"});
  std::optional<double> ref_share;
  if (retrans != all.end()) {
    const double sent = CounterIncrease(s, ref_from_s, ref_to_s);
    if (sent > 0) ref_share = CounterIncrease(retrans->second, ref_from_s, ref_to_s) * kMss / sent;
  }
  for (size_t i = 1; i < s.size(); ++i) {
    const double dt = s[i].first - s[i - 1].first;
    if (dt <= 0 || s[i].second < s[i - 1].second) continue;
    RatePoint p{.t0 = s[i - 1].first,
                .t1 = s[i].first,
                .gbps = (s[i].second - s[i - 1].second) * 8 / dt / 1e9,
                .evidence = evidence.count(s[i].first) != 0};
    if (retrans != all.end()) {
      const double sent = s[i].second - s[i - 1].second;
      const double segs = CounterIncrease(retrans->second, p.t0, p.t1);
      const double share = sent > 0 ? segs * kMss / sent : (segs > 0 ? 1.0 : 0.0);
      p.retrans = share > std::max(kMinShare, 2 * ref_share.value_or(0));
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace fdrill

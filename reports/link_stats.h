// Link evidence: per link and phase, the traffic it carried and what its
// counters say went wrong (summary.json links[], transport[]; the report's
// Links table, fabric map and heat map). Pure.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reports/localise.h"
#include "reports/run_data.h"
#include "reports/summary.h"

namespace fdrill {

// Every link the counters name (not "tcp"), each phase of it. Capacity from
// SWITCHES: the port whose `to` is "<node>:<link>".
std::vector<LinkStats> AnalyzeLinks(const CounterIndex& counters,
                                    const std::vector<PhaseStats>& phases,
                                    const std::vector<InventorySwitch>& switches);
std::vector<NodeTransport> AnalyzeTransport(const CounterIndex& counters,
                                            const std::vector<PhaseStats>& phases);

// The N links with the most evidence (carrier changes x 1000, errors x 10,
// drops and shaped packets, summed over the run), then the most bytes sent.
inline constexpr size_t kMarkdownTopLinks = 8;
std::vector<const LinkStats*> TopLinks(const Summary& s, size_t n);

// One link's send rate over time: between consecutive samples of its
// tx_bytes (or IB port_xmit_data / NVLink tx_bytes), the interval's middle
// and Gbit/s; an interval across a reset is left out.
struct RatePoint {
  double t0 = 0;
  double t1 = 0;
  double gbps = 0;
  // An error or drop counter of the link rose in it (symbol errors, drops,
  // qdisc overlimits, link_downed, ...): what the heat map paints red.
  bool evidence = false;
  // TCP retransmitted a larger share of what the link sent than in the
  // reference window (twice its share there, and at least 0.1 %): a class
  // of its own, never "error counters" — a healthy link retransmits now and
  // then, and a stopped receiver makes its senders retransmit too.
  bool retrans = false;
};
// The link's tx rate between consecutive samples, each marked as above;
// [ref_from_s, ref_to_s) is the reference (the baseline) for the
// retransmission share.
std::vector<RatePoint> LinkRates(const CounterIndex& counters, const std::string& node,
                                 const std::string& link, double ref_from_s, double ref_to_s);

// Which counter of a link counts its sent bytes: "tx_bytes" for a netdev or
// NVLink, "port_xmit_data" for an IB port (in bytes: agents/counters.h).
std::string TxCounterOf(const std::string& link);
std::string RxCounterOf(const std::string& link);

}  // namespace fdrill

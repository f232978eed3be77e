// Localisation: which element of the fabric a slowdown came from — a link
// (a node's netdev, IB port or NVLink), a rank, or a node's transport —
// from every signal a run records, with a confidence and the evidence in
// words. Used for each fault the drill applied (FaultStats::localisation),
// for slowdowns nobody scheduled (anomalies) and live by the controller
// (a `culprit` event). Pure functions; definitions in reports/README.md.
//
// Signals, each compared with a reference interval (the baseline) so that
// a counter that always rises (a chronically noisy port) is not news:
// 1. Link counters (`counters` events): per node and link, the rises of its
//    error-class counters above what the reference rate predicts. A carrier
//    change or IB link_downed says "this link went down" (weight 1000); IB
//    symbol/recovery errors, NVLink DL replay/recovery/CRC and *_errors
//    weigh 10 per event; drops, discards and qdisc drops/overlimits (a
//    shaper holding packets back) weigh 1; the TCP segments the node
//    retransmitted through the link (<if>.tcp_retrans_segs: the sender's
//    view of loss anywhere on its path) 0.1, from 50 above the reference.
// 2. The transport: a node's TCP retransmissions and retransmit timeouts
//    (tcp.retrans_segs, tcp.timeouts x 10) above the reference rate.
// 3. The ranks: the rank its peers waited for. In each iteration the rank
//    that waited least in the line-up arrived last, and the others' median
//    wait is the delay it caused; per rank, that delay in ms per second,
//    against the reference (a straggler stopped 50 ms of every 200 ms
//    causes ~100 ms/s where every rank causes ~30 by chance here).
// 3b. The ranks' CPU time ("rank/<r>.cpu_seconds"): a rank that ran at most
//    85 % of its baseline CPU rate while its peers' median stayed 12 points
//    above it was stopped or starved.
// The link with the largest weighted excess wins (high confidence when it
// is at least 3x the next link's; a switch instead when the links level
// with it are every cable of that switch: whole_switch.h, given SWITCHES;
// low when only its retransmissions rose and either it resent under 0.5 %
// of what it sent or no rank's CPU time was measured inside W yet) —
// unless only its retransmissions rose and a rank signal names a rank:
// then the rank; without link evidence a
// starved rank (3b), else a clear last-arriving rank; without any, the node
// that retransmitted most (low confidence: a node retransmits toward a
// broken peer too).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reports/counter_index.h"
#include "reports/run_data.h"
#include "reports/series.h"

namespace fdrill {

struct Culprit {
  // "link n1 fab0", "rank 2 (n2)", "node n3", "switch rail1-leaf0" (`node`
  // is then the switch).
  std::string element;
  std::string node;
  std::string link;         // the interface or port on `node`; empty unless a link
  std::string link_rises;   // a link's counters that rose: "qdisc_overlimits +800, ..."
  std::optional<int> rank;  // a rank on `node` the evidence names, if any
  std::string confidence;   // "high" | "medium" | "low"
  std::vector<std::string> evidence;
};

struct LocaliseWindow {
  double from_s = 0;  // the fault's apply (or an anomaly's start)
  double to_s = 0;    // its revert, or as far as the data goes
  // The reference: the baseline phase; empty (ref_to_s <= ref_from_s) = none.
  double ref_from_s = 0;
  double ref_to_s = 0;
};

// The element the evidence points at in `w`, or nullopt when nothing stood
// out (a fault-free interval, a fault the signals cannot see).
// SWITCHES: the fabric's cabling (inventory.json's), when known.
std::optional<Culprit> Localise(const CounterIndex& counters, const std::vector<Iteration>& series,
                                const LocaliseWindow& w,
                                const std::vector<InventorySwitch>& switches = {});

// Each class of evidence on its own over W, for a window several faults
// share (reports/compound.h): what the links' counters name (the strongest
// link whose own counters rose, or a whole switch; a link whose
// retransmissions alone rose only when nothing else did, at low
// confidence), and what the ranks name (a starved rank, else the rank its
// peers waited for). Either may be absent.
struct ClassCulprits {
  std::optional<Culprit> link;
  std::optional<Culprit> rank;
  // The share of W's time the named rank held the job up, beyond the
  // reference: its CPU time missing against its peers' (1 - share /
  // ref_share), or, named from the line-up, its peers' extra wait for it
  // (ms per second / 1000). Null without a rank.
  std::optional<double> rank_held;
};
ClassCulprits LocaliseEachClass(const CounterIndex& counters, const std::vector<Iteration>& series,
                                const LocaliseWindow& w,
                                const std::vector<InventorySwitch>& switches = {});

// Signal 1 alone: every link whose error-class counters rose beyond their
// reference rate in W, the strongest first.
struct LinkEvidence {
  std::string node;
  std::string link;
  double score = 0;                // the weighted excess
  std::vector<std::string> rises;  // "qdisc_overlimits +800", ...
  // Only its TCP retransmissions rose: what the node inferred about its
  // path, which a stopped receiver (whose full buffers drop what it is
  // sent) explains as well as a lossy link.
  bool retrans_only = true;
};
std::vector<LinkEvidence> LinkEvidenceIn(const CounterIndex& counters, const LocaliseWindow& w);

// A counter's key split at its first dot: "fab0.qdisc_drops" -> ("fab0",
// "qdisc_drops"), "ib/mlx5_0/1.symbol_error" -> ("ib/mlx5_0/1",
// "symbol_error"), "tcp.timeouts" -> ("tcp", "timeouts"). A link's name
// never holds a dot; a key without one is (key, ""). SplitCounterName
// (counter_index.h), as strings.
std::pair<std::string, std::string> SplitCounterKey(const std::string& key);

// Whether a link is one of fdrill's own devices rather than the fabric's:
// link_loss's egress hands what it loses to a veth of its own,
// "fdrill<hash>", whose peer is down (injectors/egress_loss.cc), so its
// tx_dropped are the fault's mechanism. Neither evidence nor a link of the
// links table.
bool FdrillOwnDevice(std::string_view link);

// The weight of one counter as link evidence (signal 1 above); 0 for a
// counter that is not (bytes, packets, port_xmit_wait).
double LinkEvidenceWeight(std::string_view counter);

}  // namespace fdrill

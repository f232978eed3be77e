// The localisation (reports/localise.h) on hand-built counters and ranks,
// and anomalies (FindAnomalies) on whole synthetic drills: a link degraded
// with no fault of the drill's is found and named; noise is not.
#include "reports/localise.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <tuple>

#include <gtest/gtest.h>

#include "reports/analysis.h"
#include "reports/run_dir.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::AnalyzeRun;
using reports_test::kBaselineGbps;
using reports_test::SyntheticRun;
using reports_test::TempDir;

// Samples every second from 0 to 30 s for nodes n0..n3; `value(node, t)`
// gives each counter's cumulative value.
template <typename F>
std::vector<Event> Samples(const std::vector<std::string>& counters, F value) {
  std::vector<Event> out;
  for (int t = 0; t <= 30; ++t) {
    for (int n = 0; n < 4; ++n) {
      Event e{.t = static_cast<double>(t), .type = "counters", .node = "n" + std::to_string(n)};
      for (const std::string& c : counters) e.counters.push_back({c, value(e.node, c, t)});
      out.push_back(std::move(e));
    }
  }
  return out;
}

// Baseline [0, 10), fault [15, 20).
constexpr LocaliseWindow kWindow{.from_s = 15, .to_s = 20, .ref_from_s = 0, .ref_to_s = 10};

// Ranks 0..3 on n0..n3, one iteration every 50 ms; in [slow_from, slow_to)
// the peers of `last` wait `gap_ms` for it.
std::vector<Iteration> Iterations(int last, double gap_ms, double slow_from, double slow_to) {
  std::vector<Iteration> out;
  for (int i = 0; i < 600; ++i) {
    Iteration it{.iter = i, .start_s = i * 0.05, .end_s = i * 0.05 + 0.04, .time_ms = 40};
    it.busbw_gbps = 10;
    for (int r = 0; r < 4; ++r) {
      const bool slow = it.start_s >= slow_from && it.start_s < slow_to;
      static const std::string kNodes[] = {"n0", "n1", "n2", "n3"};
      it.ranks.push_back({.rank = r,
                          .node = kNodes[r],
                          .time_ms = 40,
                          .wait_ms = slow && r != last ? gap_ms : 0.3});
    }
    out.push_back(std::move(it));
  }
  return out;
}

TEST(CounterIndex, ChangingHoldsTheSeriesThatChangedAndACopyPointsIntoItsOwn) {
  const auto events = Samples({"fab0.qdisc_drops", "rank/1.cpu_seconds"},
                              [](const std::string& node, const std::string& c, int t) {
                                return node == "n2" && c == "fab0.qdisc_drops" ? t : 0.0;
                              });
  const CounterIndex index(events);
  EXPECT_EQ(index.series().size(), 8u);
  ASSERT_EQ(index.changing().size(), 1u);
  EXPECT_EQ(index.changing().begin()->first, (CounterIndex::Key{"n2", "fab0.qdisc_drops"}));
  EXPECT_TRUE(index.rank_cpu_sampled());  // sampled, though it never changed
  const CounterIndex copy = index;
  ASSERT_EQ(copy.changing().size(), 1u);
  EXPECT_EQ(copy.changing().begin()->second, &copy.series().at({"n2", "fab0.qdisc_drops"}));
  EXPECT_FALSE(CounterIndex().rank_cpu_sampled());
}

// A node's sample walks the index in name order; counters out of order, a
// counter the node lost, one it gained and another node's all land in their
// own series, and a series is "changing" from its first change on, also one
// that went back to where it started.
TEST(CounterIndex, ASampleInAnyOrderLandsInItsSeries) {
  std::mt19937 rng(7);
  std::map<CounterIndex::Key, CounterIndex::Series> expected;
  CounterIndex index;
  const std::vector<std::string> names = {"a.x", "b.y", "fab0.rx", "fab0.tx", "ib/m/1.z", "tcp.t"};
  for (int t = 0; t < 40; ++t) {
    for (const std::string node : {"n2", "n10", "n1"}) {
      std::vector<std::string> these = names;
      std::shuffle(these.begin(), these.end(), rng);
      if (t % 3 == 1) these.erase(these.begin() + 2);  // one gone this time
      if (t > 20) these.push_back("late." + node);     // a new one
      if (t % 2 == 0) std::sort(these.begin(), these.end());
      CounterIndex::NodeSample sample = index.AddSample(node, t);
      for (const std::string& name : these) {
        const double value = name == "b.y" ? (t % 4 == 1 ? 6 : 5) : name == "a.x" ? 1 : t;
        sample.Add(name, value);
        expected[{node, name}].push_back({t, value});
      }
    }
  }
  ASSERT_EQ(index.series().size(), expected.size());
  for (const auto& [key, series] : expected) {
    ASSERT_TRUE(index.series().contains(key)) << key.first << " " << key.second;
    EXPECT_EQ(index.series().at(key), series) << key.first << " " << key.second;
    const bool changed = series.front().second != series.back().second ||
                         std::any_of(series.begin(), series.end(),
                                     [&](const auto& x) { return x.second != series[0].second; });
    EXPECT_EQ(index.changing().contains(key), changed) << key.first << " " << key.second;
  }
  EXPECT_FALSE(index.changing().contains({"n1", "a.x"}));
  EXPECT_TRUE(index.changing().contains({"n1", "b.y"}));  // 5, 6, 5, ...
}

// The last sample at or before t, or nullptr.
const std::pair<double, double>* LastAtOrBefore(const CounterIndex::Series& s, double t) {
  const std::pair<double, double>* out = nullptr;
  for (const auto& x : s) {
    if (x.first <= t) out = &x;
  }
  return out;
}

// Compact keeps what Localise reads of any window whose ends are bounds or
// come at or after `before`: the rise (CounterIncrease, resets included),
// the last sample at or before each end, and whether the first precedes the
// start. Integer-valued counters, so a rise summed in other steps is exact.
TEST(CounterIndex, CompactKeepsWhatEveryWindowReads) {
  std::mt19937 rng(24);
  std::vector<Event> events;
  double t = 0, rising = 0, flat = 7, resetting = 0;
  for (int i = 0; i < 600; ++i) {
    t += 0.5 + (rng() % 100) / 100.0;  // irregular pushes
    rising += rng() % 5;
    if (rng() % 50 == 0) flat += 1;
    resetting = rng() % 40 == 0 ? static_cast<double>(rng() % 3) : resetting + rng() % 3;
    Event e{.t = t, .type = "counters", .node = "n" + std::to_string(i % 2)};
    e.counters = {{"fab0.qdisc_drops", rising},
                  {"fab0.carrier_changes", flat},
                  {"ib/mlx5_0/1.symbol_error", resetting}};
    events.push_back(std::move(e));
  }
  const CounterIndex whole(events);
  CounterIndex compact = whole;
  const double before = t - 60;
  const std::vector<double> bounds = {3.5, 40, 41.25, 200, 333.3};
  const size_t dropped = compact.Compact(before, bounds);
  EXPECT_EQ(compact.samples() + dropped, whole.samples());
  EXPECT_LT(compact.samples(), whole.samples() / 4);

  std::vector<double> ends = bounds;
  for (double x = before; x <= t + 1; x += 7.3) ends.push_back(x);
  ends.push_back(0.1);  // before any sample
  for (const auto& [key, s] : whole.series()) {
    const auto& c = compact.series().at(key);
    EXPECT_EQ(c.front(), s.front()) << key.second;
    EXPECT_EQ(c.back(), s.back()) << key.second;
    for (double from : ends) {
      const auto* a = LastAtOrBefore(s, from);
      const auto* b = LastAtOrBefore(c, from);
      ASSERT_EQ(a == nullptr, b == nullptr) << key.second << " at " << from;
      if (a != nullptr) {
        EXPECT_EQ(*a, *b) << key.second << " at " << from;
      }
      for (double to : ends) {
        if (!(to > from)) continue;
        EXPECT_EQ(CounterIncrease(c, from, to), CounterIncrease(s, from, to))
            << key.first << " " << key.second << " (" << from << ", " << to << "]";
      }
    }
  }
}

TEST(Localise, TheLinkWhoseShaperHeldPacketsBackNotTheBusiestOne) {
  const auto events = Samples({"fab0.qdisc_overlimits", "fab0.tx_bytes"},
                              [](const std::string& node, const std::string& c, int t) -> double {
                                if (c == "fab0.tx_bytes") return node == "n3" ? 9e9 * t : 1e9 * t;
                                return node == "n1" && t > 15 ? 700.0 * (t - 15) : 0;
                              });
  auto c = Localise(CounterIndex(events), {}, kWindow);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "link n1 fab0");
  EXPECT_EQ(c->node, "n1");
  EXPECT_EQ(c->link, "fab0");
  EXPECT_EQ(c->link_rises, "qdisc_overlimits +3500");
  EXPECT_EQ(c->confidence, "high");

  // The same answer, word for word, from the index the live localiser
  // keeps: compacted up to the fault's start with the baseline's and the
  // fault's bounds.
  CounterIndex compact(events);
  ASSERT_GT(compact.Compact(kWindow.from_s, {kWindow.ref_from_s, kWindow.ref_to_s}), 0u);
  auto again = Localise(compact, {}, kWindow);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->element, c->element);
  EXPECT_EQ(again->link_rises, c->link_rises);
  EXPECT_EQ(again->confidence, c->confidence);
  EXPECT_EQ(again->evidence, c->evidence);
}

// A link that went down carries nothing — and neither does any other link
// of a collective that waits for it. Its carrier change names it.
TEST(Localise, ALinkThatWentDownByItsCarrierChangeWhenEveryLinkFellSilent) {
  const auto events = Samples({"fab0.carrier_changes", "fab0.tx_bytes"},
                              [](const std::string& node, const std::string& c, int t) -> double {
                                if (c == "fab0.tx_bytes")
                                  return 1e9 * std::min(t, 15);  // all silent from 15 s
                                return node == "n2" ? 1 + (t >= 16) + (t >= 19) : 1;
                              });
  auto c = Localise(CounterIndex(events), {}, kWindow);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "link n2 fab0");
  EXPECT_EQ(c->confidence, "high");
  EXPECT_EQ(c->evidence.front(), "n2 fab0: carrier_changes +2");
}

// A port that always drops a little is not news; the same rate in the
// window as in the baseline names nothing.
TEST(Localise, ACounterRisingAtItsBaselineRateIsNotEvidence) {
  const auto events = Samples({"fab0.rx_dropped"},
                              [](const std::string& node, const std::string&, int t) -> double {
                                return node == "n3" ? 40.0 * t : 0;
                              });
  EXPECT_FALSE(Localise(CounterIndex(events), {}, kWindow).has_value());
  EXPECT_FALSE(Localise(CounterIndex(events), Iterations(0, 0, 0, 0), kWindow).has_value());
}

TEST(Localise, WithoutLinkEvidenceTheRankItsPeersWaitedFor) {
  auto c = Localise(CounterIndex(), Iterations(2, 35, 15, 20), kWindow);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "rank 2 (n2)");
  EXPECT_EQ(c->node, "n2");
  EXPECT_EQ(c->rank, 2);
  EXPECT_TRUE(c->link.empty());
  EXPECT_EQ(c->confidence, "high");
  EXPECT_NE(c->evidence.front().find("entered the collective last"), std::string::npos);
  // Peers waiting 0.7 ms an iteration for it (14 ms per second) is noise.
  EXPECT_FALSE(Localise(CounterIndex(), Iterations(2, 1.0, 15, 20), kWindow).has_value());
}

// The same gap before the fault (a rank on a slower host) is no evidence.
TEST(Localise, ARankThatWasAlwaysLastIsNotNews) {
  EXPECT_FALSE(Localise(CounterIndex(), Iterations(2, 35, 0, 30), kWindow).has_value());
}

// A slow link stalls whichever ranks wait on it: the link's evidence
// stands, the rank is reported.
TEST(Localise, LinkEvidenceWinsOverARankOnAnotherNode) {
  const auto events = Samples({"fab0.tx_dropped"},
                              [](const std::string& node, const std::string&, int t) -> double {
                                return node == "n1" && t > 15 ? 10.0 * (t - 15) : 0;
                              });
  auto c = Localise(CounterIndex(events), Iterations(3, 35, 15, 20), kWindow);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "link n1 fab0");
  EXPECT_EQ(c->confidence, "high");
  EXPECT_FALSE(c->rank.has_value());
  EXPECT_NE(c->evidence.back().find("rank 3 (n3)"), std::string::npos);
}

TEST(Localise, TwoLinksWithComparableEvidenceIsMediumConfidence) {
  const auto events = Samples(
      {"fab0.tx_dropped"}, [](const std::string& node, const std::string&, int t) -> double {
        if (t <= 15) return 0;
        return node == "n1" ? 10.0 * (t - 15) : node == "n3" ? 6.0 * (t - 15) : 0;
      });
  auto c = Localise(CounterIndex(events), {}, kWindow);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "link n1 fab0");
  EXPECT_EQ(c->confidence, "medium");
  EXPECT_EQ(c->evidence[1], "also n3 fab0: tx_dropped +30");
}

TEST(Localise, RetransmissionsAloneNameANodeAtLowConfidence) {
  const auto events = Samples({"tcp.retrans_segs", "tcp.timeouts"},
                              [](const std::string& node, const std::string& c, int t) -> double {
                                if (node != "n0" || t <= 15) return 3.0 * t;
                                return c == "tcp.timeouts" ? 3.0 * t : 3.0 * t + 200.0 * (t - 15);
                              });
  auto c = Localise(CounterIndex(events), {}, kWindow);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "node n0");
  EXPECT_EQ(c->confidence, "low");
}

// Loss that no netdev counter sees (a netfilter drop, a lossy switch
// port): the sender's retransmissions through its link name the link; a
// handful more than the baseline's is not evidence.
TEST(Localise, TheLinkItsNodeRetransmittedThroughWhenNoNetdevCounterSawTheLoss) {
  const auto events = Samples({"fab0.tcp_retrans_segs", "tcp.retrans_segs"},
                              [](const std::string& node, const std::string&, int t) -> double {
                                const double noise = 2.0 * t;
                                return node == "n3" && t > 15 ? noise + 900.0 * (t - 15) : noise;
                              });
  auto c = Localise(CounterIndex(events), Iterations(0, 0, 0, 0), kWindow);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "link n3 fab0");
  EXPECT_EQ(c->confidence, "high");
  EXPECT_EQ(c->evidence.front(),
            "n3 fab0: tcp_retrans_segs +4510 (~10 expected at the baseline's rate)");

  // A rank its peers waited for explains retransmissions alone: a stopped
  // receiver's full buffers drop what its senders send.
  auto r = Localise(CounterIndex(events), Iterations(0, 30, 15, 20), kWindow);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->element, "rank 0 (n0)");
  EXPECT_EQ(r->evidence[1],
            "only TCP retransmissions rose (n3 fab0: tcp_retrans_segs +4510 (~10 expected at the "
            "baseline's rate)): a stopped receiver makes its senders retransmit too");

  const auto few = Samples({"fab0.tcp_retrans_segs"},
                           [](const std::string& node, const std::string&, int t) -> double {
                             return node == "n3" && t > 15 ? 8.0 * (t - 15) : 0;
                           });
  EXPECT_FALSE(Localise(CounterIndex(few), {}, kWindow).has_value());  // +40 < 50
}

// n3 fab0 retransmits +4510 segments from second 15 (2 a second before,
// on every node), every link sends `tx_bytes_per_s`, and rank 0's CPU time
// runs at 0.9 core throughout.
std::vector<Event> RetransOnN3Sending(double tx_bytes_per_s) {
  return Samples({"fab0.tcp_retrans_segs", "fab0.tx_bytes", "rank/0.cpu_seconds"},
                 [=](const std::string& node, const std::string& c, int t) -> double {
                   if (c == "rank/0.cpu_seconds") return 0.9 * t;
                   if (c == "fab0.tx_bytes") return tx_bytes_per_s * t;
                   return node == "n3" && t > 15 ? 2.0 * t + 900.0 * (t - 15) : 2.0 * t;
                 });
}

// The same retransmissions and the same rank arriving last, but the ranks'
// CPU time was sampled and none ran short, and the link resent more than
// half a percent of what it sent: no rank stopped, so the rank that arrived
// last is a neighbour the lossy link stalled, and the link is named
// (bench/localisation.sh's link_loss: the sender resends 3-5 %, the ring's
// next rank waits for its data). Resending a tenth of a percent is what a
// stopped receiver's senders do (its CPU signal can miss): the rank stays.
TEST(Localise, ALastRankThatKeptItsCpuDoesNotExplainALossyLinksRetransmissions) {
  // +4510 segments x 1448 B of 500 MB sent: 1.3 %.
  auto c = Localise(CounterIndex(RetransOnN3Sending(1e8)), Iterations(0, 30, 15, 20), kWindow);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "link n3 fab0");
  EXPECT_EQ(c->evidence[1],
            "n3 fab0 resent about 1.3 % of what it sent, and no rank ran short of CPU: loss on "
            "the link, not a stalled receiver");
  EXPECT_EQ(c->evidence.back(),
            "rank 0 (n0) entered the collective last: its peers waited 594 ms per second for it "
            "(0 in the baseline; the next rank 0) (a slow link also stalls the ranks that wait on "
            "it)");
  // Of 50 GB sent: 0.013 %.
  auto r = Localise(CounterIndex(RetransOnN3Sending(1e10)), Iterations(0, 30, 15, 20), kWindow);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->element, "rank 0 (n0)");
}

// Retransmissions alone, no rank that arrived last or ran short of CPU,
// and a tenth of a percent of what the link sent resent: what a busy
// host's senders do (cpu_hog on the emulated fabric named "link n1 fab0"
// at high confidence from 0.08-0.5 % resent). The link is named at low
// confidence, saying why; a lossy link's share keeps it high.
TEST(Localise, ALinkThatResentATenthOfAPercentAloneIsNamedAtLowConfidence) {
  // +4510 segments x 1448 B of 50 GB sent: 0.013 %.
  auto thin = Localise(CounterIndex(RetransOnN3Sending(1e10)), Iterations(0, 0, 0, 0), kWindow);
  ASSERT_TRUE(thin.has_value());
  EXPECT_EQ(thin->element, "link n3 fab0");
  EXPECT_EQ(thin->confidence, "low");
  ASSERT_GE(thin->evidence.size(), 2u);
  EXPECT_EQ(thin->evidence[1],
            "n3 fab0 resent only 0.01 % of what it sent: a lossy link resends percents, a busy or "
            "stalled host's senders a few tenths, so the link is a guess");
  // Of 500 MB sent: 1.3 %, a lossy link's share.
  auto lossy = Localise(CounterIndex(RetransOnN3Sending(1e8)), Iterations(0, 0, 0, 0), kWindow);
  ASSERT_TRUE(lossy.has_value());
  EXPECT_EQ(lossy->element, "link n3 fab0");
  EXPECT_EQ(lossy->confidence, "high");
  EXPECT_EQ(lossy->evidence.size(), 1u);
}

// A live view's first second of a fault: retransmissions alone on a link
// and a rank its peers waited for, before any rank's CPU time was sampled
// inside the window (samples come once a second). A stopped rank's senders
// resend as a lossy link's do, so the link is named at low confidence,
// saying why; the whole window, with the CPU sampled inside it, names it
// high (the ranks kept their CPU).
TEST(Localise, RetransmissionsBeforeAnyCpuSampleInsideTheWindowNameTheLinkAtLowConfidence) {
  const CounterIndex counters(RetransOnN3Sending(1e8));
  const auto iterations = Iterations(0, 30, 15, 20);
  const LocaliseWindow young{.from_s = 15.6, .to_s = 16.4, .ref_from_s = 0, .ref_to_s = 10};
  auto early = Localise(counters, iterations, young);
  ASSERT_TRUE(early.has_value());
  EXPECT_EQ(early->element, "link n3 fab0");
  EXPECT_EQ(early->confidence, "low");
  EXPECT_NE(std::find(early->evidence.begin(), early->evidence.end(),
                      "no rank's CPU time was measured inside this window yet: a stopped rank's "
                      "senders resend as a lossy link's do, so the link is a guess until it is"),
            early->evidence.end());
  auto whole = Localise(counters, iterations, kWindow);
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->element, "link n3 fab0");
  EXPECT_EQ(whole->confidence, "high");
}

// Loss that collapses what the link sends: it retransmits fewer segments a
// second than in a baseline where the shaped fabric drops some (here 3,000
// a second of 430 MB: 1 %), but a far larger share of what it still sends
// (800 a second of 10 MB: 11.6 %). The link is named, against the
// baseline's share (bench/localisation.sh's link_loss on the flat fabric
// named the rank that arrived last, 0 of 4, before this).
TEST(Localise, ALinkWhoseLossCollapsedItsTrafficIsNamedByItsShareResent) {
  const auto events = Samples({"fab0.tcp_retrans_segs", "fab0.tx_bytes", "rank/0.cpu_seconds"},
                              [](const std::string& node, const std::string& c, int t) -> double {
                                if (c == "rank/0.cpu_seconds") return 0.9 * t;
                                const bool tx = c == "fab0.tx_bytes";
                                double v = 0;  // a rate per second, summed
                                for (int k = 1; k <= t; ++k) {
                                  const bool lossy = node == "n3" && k > 15 && k <= 20;
                                  v += tx ? (lossy ? 1e7 : 4.3e8) : (lossy ? 800 : 3000);
                                }
                                return v;
                              });
  auto c = Localise(CounterIndex(events), Iterations(0, 30, 15, 20), kWindow);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "link n3 fab0");
  EXPECT_EQ(c->link_rises,
            "tcp_retrans_segs +4000 (~349 expected at the baseline's share of what it sent)");
  EXPECT_EQ(c->evidence[1],
            "n3 fab0 resent about 11.6 % of what it sent, and no rank ran short of CPU: loss on "
            "the link, not a stalled receiver");
  // Every link's traffic and retransmissions fall alike (the job slowed
  // for another reason): no share rose, no link is named.
  const auto alike = Samples({"fab0.tcp_retrans_segs", "fab0.tx_bytes", "rank/0.cpu_seconds"},
                             [](const std::string&, const std::string& c, int t) -> double {
                               if (c == "rank/0.cpu_seconds") return 0.9 * t;
                               const double base = c == "fab0.tx_bytes" ? 4.3e8 : 3000;
                               return t <= 15 ? base * t : base * 15 + base / 40 * (t - 15);
                             });
  auto a = Localise(CounterIndex(alike), Iterations(0, 30, 15, 20), kWindow);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->element, "rank 0 (n0)");
}

// A switch port's own counters (its agent samples them too) outweigh the
// retransmissions its drops cause at the sender.
TEST(Localise, ASwitchPortsOwnCountersOutweighTheSendersRetransmissions) {
  auto events = Samples({"fab0.tcp_retrans_segs"},
                        [](const std::string& node, const std::string&, int t) -> double {
                          return node == "n1" && t > 15 ? 600.0 * (t - 15) : 0;
                        });
  for (int t = 0; t <= 30; ++t) {
    Event e{.t = static_cast<double>(t), .type = "counters", .node = "sw"};
    e.counters.push_back({"swp2.qdisc_overlimits", t > 15 ? 400.0 * (t - 15) : 0});
    events.push_back(std::move(e));
  }
  auto c = Localise(CounterIndex(events), {}, kWindow);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "link sw swp2");
  EXPECT_EQ(c->confidence, "high");  // 2000 against n1 fab0's 300
}

// A rank stopped a quarter of the time runs three quarters of its CPU;
// its busy-polling peers keep theirs. The CPU signal names it, ahead of
// the line-up's.
TEST(Localise, ARankThatLostItsCpuTimeIsNamed) {
  const auto events = Samples({"rank/0.cpu_seconds", "fab0.tx_bytes"},
                              [](const std::string& node, const std::string& c, int t) -> double {
                                if (c == "fab0.tx_bytes") return 1e9 * t;
                                if (node != "n2" || t <= 15) return 0.9 * t;
                                return 0.9 * 15 + 0.65 * (t - 15);
                              });
  auto c = Localise(CounterIndex(events), Iterations(1, 35, 15, 20), kWindow);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "rank 0 (n2)");  // the counter names its rank; the node is the agent's
  EXPECT_EQ(c->node, "n2");
  EXPECT_EQ(c->confidence, "medium");  // the line-up blames another rank; 72 % is not <= 70 %
  EXPECT_EQ(c->evidence.front(),
            "rank 0 (n2) got 72 % of the CPU time its peers got (100 % in the baseline): stopped "
            "or starved");
  // Ranks sampled only from after the baseline began (the workload starts
  // with it): the reference runs from their first sample.
  const auto late = Samples({"rank/0.cpu_seconds"},
                            [](const std::string& node, const std::string&, int t) -> double {
                              if (t < 2) return 0;
                              return node != "n2" || t <= 15 ? 0.9 * t : 0.9 * 15 + 0.6 * (t - 15);
                            });
  std::vector<Event> from_two;
  for (const Event& e : late) {
    if (e.t >= 2) from_two.push_back(e);
  }
  auto l = Localise(CounterIndex(from_two), {}, kWindow);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->element, "rank 0 (n2)");
  EXPECT_EQ(l->confidence, "high");  // 67 %
  // Every rank losing CPU alike (a hog on a shared machine) names nothing.
  const auto all =
      Samples({"rank/0.cpu_seconds"}, [](const std::string&, const std::string&, int t) -> double {
        return t <= 15 ? 0.9 * t : 0.9 * 15 + 0.5 * (t - 15);
      });
  EXPECT_FALSE(Localise(CounterIndex(all), {}, kWindow).has_value());
}

// Ranks sharing cores (the emulated fabric: four busy-polling ranks on two)
// each run 0.3-0.7 cores from one stretch of seconds to the next. CI's
// failed run named a bystander at 72 % of its own baseline rate, which was
// high, over the straggler: the window's rates are compared with each
// other, and the straggler, short of its peers there, is named. A rank
// that always runs less than its peers is not.
TEST(Localise, TheRankShortOfItsPeersInTheWindowIsNamedNotOneWhoseBaselineRanHigh) {
  // Cores a second per node: baseline [0, 10), the fault window [15, 20).
  const std::map<std::string, std::pair<double, double>> rates = {
      {"n0", {0.60, 0.43}}, {"n1", {0.45, 0.50}}, {"n2", {0.40, 0.32}}, {"n3", {0.35, 0.50}}};
  const auto events = Samples({"rank/0.cpu_seconds"},
                              [&](const std::string& node, const std::string&, int t) -> double {
                                const auto [before, during] = rates.at(node);
                                return t <= 15 ? before * t : before * 15 + during * (t - 15);
                              });
  auto c = Localise(CounterIndex(events), {}, kWindow);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "rank 0 (n2)");
  EXPECT_EQ(c->evidence.front(),
            "rank 0 (n2) got 64 % of the CPU time its peers got (89 % in the baseline): stopped "
            "or starved");
  // n3 runs 60 % of its peers before and during the window: nothing.
  const auto always = Samples({"rank/0.cpu_seconds"},
                              [](const std::string& node, const std::string&, int t) -> double {
                                return (node == "n3" ? 0.3 : 0.5) * t;
                              });
  EXPECT_FALSE(Localise(CounterIndex(always), {}, kWindow).has_value());
}

// A window that opened between two samples is measured, until the next
// ones come, over a second that lies mostly before it: that second's CPU
// time does not speak for the fault alone (the live view once named a rank
// "starved", high, 0.34 s into a leaf-down, from a second 0.66 s of which
// came before it), only with the line-up naming the same rank, as it does
// for a straggler. Once most of the second is inside, it speaks alone.
TEST(Localise, ACpuRateMeasuredMostlyBeforeTheWindowDoesNotNameARank) {
  const auto events = Samples({"rank/0.cpu_seconds"},
                              [](const std::string& node, const std::string&, int t) -> double {
                                if (node != "n2" || t <= 14) return 0.9 * t;
                                return 0.9 * 14 + 0.3 * (t - 14);  // a third, from 14 s on
                              });
  const CounterIndex index(events);
  LocaliseWindow early = kWindow;
  early.from_s = 14.7;  // the second from 14 to 15: 0.3 s of it inside
  early.to_s = 15.3;
  EXPECT_FALSE(Localise(index, {}, early).has_value());
  auto agreed = Localise(index, Iterations(0, 35, 14.7, 15.3), early);
  ASSERT_TRUE(agreed.has_value());
  EXPECT_EQ(agreed->element, "rank 0 (n2)");
  EXPECT_EQ(agreed->evidence.front(),
            "rank 0 (n2) got 33 % of the CPU time its peers got (100 % in the baseline): stopped "
            "or starved");
  LocaliseWindow later = early;
  later.from_s = 14.4;  // 0.6 s of it inside
  auto c = Localise(index, {}, later);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "rank 0 (n2)");
}

// A window a fraction of a second old holds, once a sample lands in it, a
// whole second's rise: it is weighed against the baseline's rate over that
// second, not over the window (the live view named a link on a second of
// the baseline's retransmissions 0.0-0.3 s into a fault). Over the same
// second, a rise well above the baseline's rate still speaks.
TEST(Localise, AWholeSecondsRiseInAYoungWindowIsWeighedOverThatSecond) {
  auto events_with = [](double in_second_15) {
    return Samples({"fab0.tcp_retrans_segs"},
                   [=](const std::string& node, const std::string&, int t) -> double {
                     const double base = 3000.0 * t;
                     return node == "n1" && t >= 15 ? base + in_second_15 : base;
                   });
  };
  LocaliseWindow young = kWindow;
  young.from_s = 14.9;
  young.to_s = 15.05;
  EXPECT_FALSE(Localise(CounterIndex(events_with(0)), {}, young).has_value());
  auto c = Localise(CounterIndex(events_with(9000)), {}, young);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->element, "link n1 fab0");
}

TEST(Localise, EvidenceWeights) {
  EXPECT_EQ(LinkEvidenceWeight("carrier_changes"), 1000);
  EXPECT_EQ(LinkEvidenceWeight("link_downed"), 1000);
  EXPECT_EQ(LinkEvidenceWeight("symbol_error"), 10);
  EXPECT_EQ(LinkEvidenceWeight("dl_crc"), 10);
  EXPECT_EQ(LinkEvidenceWeight("rx_errors"), 10);
  EXPECT_EQ(LinkEvidenceWeight("qdisc_overlimits"), 1);
  EXPECT_EQ(LinkEvidenceWeight("port_xmit_discards"), 1);
  EXPECT_EQ(LinkEvidenceWeight("tcp_retrans_segs"), 0.1);
  EXPECT_EQ(LinkEvidenceWeight("tx_bytes"), 0);
  EXPECT_EQ(LinkEvidenceWeight("port_xmit_wait"), 0);
}

// n1's shaper counters, sampled every second; rising from `from` to `to`.
void AddShaperCounters(SyntheticRun& run, double from, double to) {
  for (int t = 0; t <= 40; ++t) {
    for (int n = 0; n < 4; ++n) {
      const double ovl = n == 1 ? 500.0 * std::clamp(t - from, 0.0, to - from) : 0;
      run.AddEvent(t + 0.01 * n, "counters",
                   {{"node", "n" + std::to_string(n)},
                    {"counters", {{"fab0.qdisc_overlimits", ovl}, {"fab0.tx_bytes", 1e9 * t}}}});
    }
  }
}

// A link degraded behind the drill's back in the recovery phase: an
// anomaly with its culprit; the drill's own fault is not one.
TEST(Anomalies, ASlowdownNoFaultExplainsIsFoundAndNamed) {
  SyntheticRun run = SyntheticRun::Standard();
  run.slow.push_back({.from_s = 27.0, .to_s = 33.0, .factor = 3.0, .culprit_node = "n0"});
  AddShaperCounters(run, 27, 33);
  Summary s = AnalyzeRun(run);
  ASSERT_EQ(s.anomalies.size(), 1u);
  const Anomaly& a = s.anomalies[0];
  EXPECT_NEAR(a.start_s, 27.0, 0.2);
  EXPECT_NEAR(a.end_s, 33.0, 0.3);
  EXPECT_GE(a.iterations, 10);
  ASSERT_TRUE(a.slowdown.has_value());
  EXPECT_NEAR(*a.slowdown, 3.0, 0.1);
  EXPECT_EQ(a.culprit.element, "link n1 fab0");
}

TEST(Anomalies, NoneInADrillWhoseOnlySlowdownIsItsFault) {
  SyntheticRun run = SyntheticRun::SlowN2(20.0);
  AddShaperCounters(run, 15, 20);
  Summary s = AnalyzeRun(run);
  EXPECT_TRUE(s.anomalies.empty());
  ASSERT_EQ(s.faults.size(), 1u);
  ASSERT_TRUE(s.faults[0].localisation.has_value());
  EXPECT_EQ(s.faults[0].localisation->element, "link n1 fab0");
}

// A slow stretch nothing can be named for (no counter, every rank alike) is
// the machine's noise: no anomaly.
TEST(Anomalies, ASlowStretchWithNoEvidenceIsNotAnAnomaly) {
  SyntheticRun run = SyntheticRun::Standard();
  run.slow.push_back({.from_s = 27.0, .to_s = 33.0, .factor = 3.0, .culprit_node = "none"});
  Summary s = AnalyzeRun(run);
  EXPECT_TRUE(s.anomalies.empty());
}

// A fault-free drill: no culprit anywhere, no anomaly.
TEST(Anomalies, AFaultFreeDrillHasNone) {
  SyntheticRun run = SyntheticRun::Standard();
  run.DropEvents("fault_apply");
  run.DropEvents("fault_applied");
  run.DropEvents("fault_revert");
  run.DropEvents("fault_reverted");
  AddShaperCounters(run, 100, 100);
  Summary s = AnalyzeRun(run);
  EXPECT_TRUE(s.anomalies.empty());
  EXPECT_TRUE(s.faults.empty());
}

// Issue 49: a burn-in's shape, one 40 s phase and no fault of its own, a
// link slowed behind its back for 6 s: the drill said pass, slowdown 1.0,
// no anomaly. With no phase named baseline the band is learned (its
// reference counts only the iterations inside the band), anomalies are
// looked for inside it against a rolling band, and the phase's
// time-weighted slowdown shows the degradation.
TEST(Anomalies, ADegradationInADrillWithNoBaselinePhaseIsFoundAndNamed) {
  SyntheticRun run = SyntheticRun::Standard();
  for (const char* type : {"fault_apply", "fault_applied", "fault_revert", "fault_reverted",
                           "phase_start", "phase_end"}) {
    run.DropEvents(type);
  }
  run.AddEvent(0.5, "phase_start", {{"phase", "soak"}});
  run.AddEvent(run.end_s + 0.5, "phase_end", {{"phase", "soak"}});
  run.slow.push_back({.from_s = 22.0, .to_s = 28.0, .factor = 3.0, .culprit_node = "n0"});
  AddShaperCounters(run, 22, 28);
  Summary s = AnalyzeRun(run);
  EXPECT_TRUE(s.baseline.learned);
  ASSERT_EQ(s.anomalies.size(), 1u) << "no anomaly in a one-phase drill";
  const Anomaly& a = s.anomalies[0];
  EXPECT_NEAR(a.start_s, 22.0, 0.2);
  EXPECT_NEAR(a.end_s, 28.0, 0.3);
  EXPECT_EQ(a.culprit.element, "link n1 fab0");
  ASSERT_TRUE(a.slowdown.has_value());
  EXPECT_NEAR(*a.slowdown, 3.0, 0.15);
  // The phase: 6 s of 40 at a third of the rate, time-weighted: 10 / 9.0.
  ASSERT_EQ(s.phases.size(), 1u);
  ASSERT_TRUE(s.phases[0].slowdown.has_value());
  EXPECT_NEAR(*s.phases[0].slowdown, 1.11, 0.03) << *s.phases[0].slowdown;
  // The reference is the healthy rate.
  EXPECT_NEAR(*s.baseline.busbw_mean, kBaselineGbps, 0.03 * kBaselineGbps);
}

// A live culprit names a switch port's fault when it names either end of
// the faulted cable (inventory.json's cabling); a neighbour's link does not.
TEST(Localise, ALiveCulpritAtTheFarEndOfTheFaultedCableNamesIt) {
  for (const auto& [node, link, names] : std::vector<std::tuple<std::string, std::string, bool>>{
           {"n2", "fab0", true}, {"sw", "swp2", true}, {"n1", "fab0", false}}) {
    SyntheticRun run = SyntheticRun::Standard();
    run.DropEvents("fault_apply");
    run.DropEvents("fault_applied");
    run.AddEvent(15.0, "fault_applied",
                 {{"id", "slow-link"},
                  {"kind", "link_rate"},
                  {"node", "sw"},
                  {"target", "swp2"},
                  {"verified", true}});
    run.AddEvent(16.5, "culprit",
                 {{"id", "slow-link"},
                  {"node", node},
                  {"link", link},
                  {"element", "link " + node + " " + link},
                  {"confidence", "high"},
                  {"evidence", nlohmann::json::array()}});
    TempDir dir;
    run.WriteTo(dir.path());
    std::ofstream(dir.path() / kInventoryFile) << R"({"nodes": [], "switches": [
      {"name": "sw", "role": "leaf", "ports": [
        {"name": "swp1", "to": "n1:fab0", "rate_bps": 1e10},
        {"name": "swp2", "to": "n2:fab0", "rate_bps": 1e10}]}]})";
    Result<RunData> data = LoadRunDir(dir.path().string());
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    const Summary s = Analyze(*data);
    ASSERT_EQ(s.faults.size(), 1u);
    EXPECT_EQ(s.faults[0].time_to_localise_s.has_value(), names) << node << " " << link;
    if (names) {
      EXPECT_NEAR(*s.faults[0].time_to_localise_s, 1.5, 1e-9);
    }
  }
}

// link_loss's own veth (fdrill<hash>, its peer down) drops what the fault
// loses: the fault's mechanism, neither evidence nor a link of the table
// (bench/localisation.sh named it before).
TEST(Localise, FdrillsOwnDevicesAreNeitherEvidenceNorLinks) {
  SyntheticRun run = SyntheticRun::SlowN2(20.0);
  for (int t = 0; t <= 40; ++t) {
    const double dropped = 400.0 * std::clamp(t - 15.0, 0.0, 5.0);
    run.AddEvent(
        t, "counters",
        {{"node", "n2"},
         {"counters", {{"fdrillab12cd34.tx_dropped", dropped}, {"fab0.tx_bytes", 1e9 * t}}}});
  }
  Summary s = AnalyzeRun(run);
  ASSERT_EQ(s.faults.size(), 1u);
  ASSERT_TRUE(s.faults[0].localisation.has_value());
  EXPECT_EQ(s.faults[0].localisation->element, "rank 2 (n2)");  // the line-up, not the veth
  for (const LinkStats& l : s.links) EXPECT_NE(l.link, "fdrillab12cd34");
  EXPECT_FALSE(s.links.empty());  // fab0 is still a link
}

}  // namespace
}  // namespace fdrill

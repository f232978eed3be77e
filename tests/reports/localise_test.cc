// The localisation (reports/localise.h) on hand-built counters and ranks
// (tests/reports/localise_inputs.h): the link whose own counters rose, not
// the busiest; a rank its peers waited for when no link has evidence; a
// node's and a link's retransmissions weighed against what it sent and
// against a rank that stopped; a switch port's own counters; the weights.
// The ranks' CPU time is in localise_cpu_test.cc, whole drills in
// localise_runs_test.cc.
#include "reports/localise.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/reports/localise_inputs.h"

namespace fdrill {
namespace {

using reports_test::Iterations;
using reports_test::kWindow;
using reports_test::Samples;

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

}  // namespace
}  // namespace fdrill

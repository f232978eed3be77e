// The localisation (reports/localise.h) by the ranks' CPU time, on
// hand-built samples (tests/reports/localise_inputs.h): a rank that lost its
// CPU time is named, against its peers in the window rather than its own
// baseline; a rate measured mostly before a young window does not speak
// alone, and a whole second's rise in a young window is weighed over it.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "reports/localise.h"
#include "tests/reports/localise_inputs.h"

namespace fdrill {
namespace {

using reports_test::Iterations;
using reports_test::kWindow;
using reports_test::Samples;

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

}  // namespace
}  // namespace fdrill

// Hand-built inputs for the localisation tests (localise_test.cc and its
// neighbours): counters sampled every second, the fault's window against
// its baseline, and ranks whose peers wait for one of them.
//
// Samples     nodes n0..n3 sampled every second from 0 to 30 s; VALUE(node,
//             counter, t) gives each counter's cumulative value.
// kWindow     the baseline [0, 10), the fault [15, 20).
// Iterations  ranks 0..3 on n0..n3, one iteration every 50 ms; in
//             [SLOW_FROM, SLOW_TO) the peers of LAST wait GAP_MS for it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reports/localise.h"

namespace fdrill::reports_test {

template <typename F>
inline std::vector<Event> Samples(const std::vector<std::string>& counters, F value) {
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

inline constexpr LocaliseWindow kWindow{.from_s = 15, .to_s = 20, .ref_from_s = 0, .ref_to_s = 10};

inline std::vector<Iteration> Iterations(int last, double gap_ms, double slow_from,
                                         double slow_to) {
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

}  // namespace fdrill::reports_test

#include "bench/many_faults_run.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <fmt/format.h>

namespace fdrill::bench {

namespace {

namespace fs = std::filesystem;

constexpr double kBaselineFrom = 0.5, kHitFrom = 3.5, kRecoveryFrom = 6.5, kEnd = 9.5;
// The controller's fan-out: the applies, then the reverts, spread over this.
constexpr double kFanOutS = 1.2;
constexpr double kRowS = 0.05;

// The counters an agent's telemetry sends for one netdev and the node's
// transport (agents/counters.h), all but the shaper's at rest.
constexpr const char* kRestCounters[] = {
    "fab0.rx_bytes",    "fab0.tx_bytes",        "fab0.rx_packets",       "fab0.tx_packets",
    "fab0.rx_errors",   "fab0.tx_errors",       "fab0.rx_dropped",       "fab0.tx_dropped",
    "fab0.qdisc_drops", "fab0.carrier_changes", "fab0.tcp_retrans_segs", "tcp.retrans_segs",
    "tcp.in_errs",      "tcp.timeouts",         "tcp.lost_retransmits"};

std::ofstream Open(const fs::path& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    std::fprintf(stderr, "report_bench: cannot write %s\n", path.c_str());
    std::exit(2);
  }
  return out;
}

double AppliedAt(int node, int nodes) { return kHitFrom + kFanOutS * node / nodes; }
double RevertedAt(int node, int nodes) { return kRecoveryFrom + kFanOutS * node / nodes; }

}  // namespace

void WriteManyFaultsRun(const fs::path& dir, int nodes) {
  {
    std::ofstream plan = Open(dir / "plan.json");
    std::string names;
    for (int n = 0; n < nodes; ++n) names += fmt::format("{}\"f{}\"", n == 0 ? "" : ",", n);
    plan << R"({"name":"scale-drill","nodes":[)" << names
         << R"(],"ranks":1,"recovery_window_iters":5,"expectations":{"max_slowdown":2.0}})"
         << "\n";
  }
  {
    std::ofstream metrics = Open(dir / "metrics.jsonl");
    int64_t iter = 0;
    for (double t = kBaselineFrom; t < kEnd; t += kRowS, ++iter) {
      metrics << fmt::format(
          R"({{"rank":0,"nranks":1,"host":"f0","node":"f0","iter":{},"op":"all_reduce",)"
          R"("dtype":"float32","redop":"sum","bytes":1048576,"count":262144,"time_ms":40.0,)"
          R"("algbw_gbps":26.2,"busbw_gbps":26.2,"wrong":0,"t":{:.3f}}})"
          "\n",
          iter, t + kRowS);
    }
  }
  std::ofstream events = Open(dir / "events.jsonl");
  auto event = [&](double t, const std::string& rest) {
    events << fmt::format(R"({{"t":{:.4f},{}}})", t, rest) << "\n";
  };
  event(0, R"("type":"drill_start","name":"scale-drill")");
  // Each second every node's counters; between them the phase and fault
  // events, in time order as the recorder writes them.
  int next_apply = 0, next_revert = 0;
  bool started = false;
  auto faults_until = [&](double t) {
    if (!started && t >= kBaselineFrom) {
      event(kBaselineFrom, R"("type":"phase_start","phase":"baseline")");
      started = true;
    }
    if (next_apply == 0 && t >= kHitFrom) {
      event(kHitFrom, R"("type":"phase_end","phase":"baseline")");
      event(kHitFrom, R"("type":"phase_start","phase":"hit")");
    }
    for (; next_apply < nodes && AppliedAt(next_apply, nodes) <= t; ++next_apply) {
      event(AppliedAt(next_apply, nodes),
            fmt::format(R"("type":"fault_applied","id":"cap@f{0}","kind":"link_rate",)"
                        R"("node":"f{0}","target":"fab0","verified":true)",
                        next_apply));
    }
    if (next_revert == 0 && t >= kRecoveryFrom) {
      event(kRecoveryFrom, R"("type":"phase_end","phase":"hit")");
      event(kRecoveryFrom, R"("type":"phase_start","phase":"recovery")");
    }
    for (; next_revert < nodes && RevertedAt(next_revert, nodes) <= t; ++next_revert) {
      event(RevertedAt(next_revert, nodes),
            fmt::format(R"("type":"fault_reverted","id":"cap@f{0}","node":"f{0}","verified":true)",
                        next_revert));
    }
  };
  for (int second = 0; second < static_cast<int>(kEnd); ++second) {
    for (int n = 0; n < nodes; ++n) {
      const double t = second + 0.2 + 0.5 * n / nodes;
      faults_until(t);
      std::string counters;
      for (const char* c : kRestCounters) counters += fmt::format("\"{}\":0,", c);
      // The shaper holds packets back while the fault is on.
      const double on =
          std::clamp(t, AppliedAt(n, nodes), RevertedAt(n, nodes)) - AppliedAt(n, nodes);
      counters += fmt::format("\"fab0.qdisc_overlimits\":{:.0f}", on * 500);
      event(t, fmt::format(R"("type":"counters","node":"f{}","counters":{{{}}})", n, counters));
    }
  }
  faults_until(kEnd);
  event(kEnd, R"("type":"phase_end","phase":"recovery")");
  event(kEnd, R"("type":"workload_exit","node":"f0","exit_code":143,"forced":true)");
  event(kEnd, R"("type":"residue","items":[])");
  event(kEnd, R"("type":"drill_end","status":"completed")");
}

}  // namespace fdrill::bench

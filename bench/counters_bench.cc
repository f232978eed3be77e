// counters_bench: what the controller does with each `counters` push of a
// real drill, per push, against the floor every push pays in the same run.
//   floor        parsing the push's body off the wire (nlohmann::json::parse
//                of its JSON text: what FrameDecoder does for any message)
//   bookkeeping  making it whole (CounterSamples::Apply) and feeding the live
//                localiser (LiveLocaliser::OnCounters): DrillRun::OnPush's
//                work for a push, less writing events.jsonl
// N nodes of C counters push once a second each, as agents do: a whole
// sample first and every 10th push, else a delta of the D counters that
// moved (agents/counters_delta.h); the localiser compacts as a drill's
// timeline ticks it (4 ticks a second). Prints µs per push for both, the
// ratio, and this process's peak RSS.
//   build/bin/counters_bench [--nodes N] [--counters C] [--changed D] [--seconds S]
// docs/performance.md has the figures.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/core/json.h"
#include "common/wire/counter_samples.h"
#include "common/wire/protocol.h"
#include "harness/controller/live_localiser.h"

namespace {

using Clock = std::chrono::steady_clock;

double PeakRssMib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024;
}

// A real node's names: netdevs, IB ports, ranks' CPU, the transport.
std::vector<std::string> CounterNames(int count) {
  static const char* kNetdev[] = {"rx_bytes",         "tx_bytes",        "rx_packets",
                                  "tx_packets",       "rx_errors",       "tx_errors",
                                  "rx_dropped",       "tx_dropped",      "qdisc_drops",
                                  "qdisc_overlimits", "carrier_changes", "tcp_retrans_segs"};
  static const char* kIb[] = {"port_xmit_data",   "port_rcv_data",   "port_xmit_packets",
                              "port_rcv_packets", "symbol_error",    "link_error_recovery",
                              "link_downed",      "port_rcv_errors", "port_xmit_discards",
                              "port_xmit_wait"};
  std::vector<std::string> out = {"tcp.retrans_segs", "tcp.in_errs", "tcp.timeouts",
                                  "tcp.lost_retransmits"};
  for (int i = 0; static_cast<int>(out.size()) < count; ++i) {
    for (const char* c : kIb) {
      if (static_cast<int>(out.size()) < count)
        out.push_back("ib/mlx5_" + std::to_string(i) + "/1." + c);
    }
    for (const char* c : kNetdev) {
      if (static_cast<int>(out.size()) < count) out.push_back("ens" + std::to_string(i) + "." + c);
    }
  }
  out.resize(static_cast<size_t>(count));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 1000, counters = 60, changed = 5, seconds = 30;
  CLI::App app{"counters_bench: the controller's work per counters push against parsing it"};
  app.add_option("--nodes", nodes, "agents pushing")->capture_default_str();
  app.add_option("--counters", counters, "counters in a whole sample")->capture_default_str();
  app.add_option("--changed", changed, "counters a delta carries")->capture_default_str();
  app.add_option("--seconds", seconds, "drill seconds simulated (one push per node each)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (nodes < 1 || counters < 1 || changed < 0 || changed > counters || seconds < 1) {
    std::fprintf(stderr, "counters_bench: need --nodes >= 1, 0 <= --changed <= --counters\n");
    return 2;
  }

  const std::vector<std::string> names = CounterNames(counters);
  std::vector<std::string> node_names;
  for (int n = 0; n < nodes; ++n) node_names.push_back("node" + std::to_string(10000 + n));
  // The pushes' bodies as they come off the wire, second by second.
  auto body = [&](int n, int s) {
    fdrill::Json c = fdrill::Json::object();
    const bool whole = s % 10 == 0;
    for (int i = 0; i < counters; ++i) {
      if (whole || i < changed) c[names[static_cast<size_t>(i)]] = 1000.0 * s + n + i;
    }
    fdrill::Json b = {{fdrill::proto::key::kNode, node_names[static_cast<size_t>(n)]},
                      {fdrill::proto::key::kCounters, std::move(c)}};
    if (!whole) b[fdrill::proto::key::kDelta] = true;
    return fdrill::DumpJson(b);
  };

  fdrill::CounterSamples samples;
  fdrill::LiveLocaliser localiser;
  localiser.BaselineStarted(0);
  Clock::duration floor{}, work{};
  size_t pushes = 0;
  for (int s = 0; s < seconds; ++s) {
    if (s == 10) localiser.BaselineEnded(10);
    for (int n = 0; n < nodes; ++n) {
      const std::string text = body(n, s);
      const auto t0 = Clock::now();
      const fdrill::Json push = fdrill::Json::parse(text);
      const auto t1 = Clock::now();
      const auto whole = samples.Apply(node_names[static_cast<size_t>(n)], push);
      if (whole) {
        const double t = s + static_cast<double>(n) / nodes;
        localiser.OnCounters(node_names[static_cast<size_t>(n)], t, *whole);
      }
      const auto t2 = Clock::now();
      floor += t1 - t0;
      work += t2 - t1;
      ++pushes;
      if (n % (nodes / 4 + 1) == 0) {
        const auto t3 = Clock::now();
        localiser.Tick(s + static_cast<double>(n) / nodes);
        work += Clock::now() - t3;
      }
    }
  }
  auto us = [&](Clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count() / static_cast<double>(pushes);
  };
  std::printf(
      "%d nodes x %d counters (%d in a delta), %d s: %zu pushes\n"
      "  floor: parse a push          %8.2f us\n"
      "  bookkeeping: whole + localiser %6.2f us  (x%.2f the floor)\n"
      "  at one push per node a second: %.3f core for %d nodes\n"
      "  localiser holds %zu samples; peak RSS %.0f MiB\n",
      nodes, counters, changed, seconds, pushes, us(floor), us(work), us(work) / us(floor),
      us(work) * nodes / 1e6, nodes, localiser.counter_samples(), PeakRssMib());
  return 0;
}

// agent_bench: one real fdrill-agent measured from the controller's side
// (issue 9, "injection latency" and "agent footprint"). bench/agent_bench.sh
// builds the namespace, the certificates and the agent around it.
//
//   agent_bench pki DIR NODE
//       a CA and certificates for NODE and "controller" in DIR
//   agent_bench inject --agent ADDR:PORT --node NODE --pki DIR [--count 200] [--interface fab0]
//       `count` applies of link_rate and of link_flap: apply request sent ->
//       reply received, where the reply comes after the agent's Verify read
//       the kernel's state back (`verified: true`), p50 / p99 / max; each is
//       reverted (also timed) before the next
//   agent_bench flapwire --agent ADDR:PORT --node NODE --pki DIR --sender-ns NS
//                        --receiver-ns NS --to ADDR [--count 20] [--down-ms 100]
//       `count` link_flap faults (down `down-ms`, once) on the interface,
//       each timed on the wire by bench/flap_wire.h's UDP stream: the gap in
//       the peer's kernel receive times against the flap's `down`
//   agent_bench footprint --agent ADDR:PORT --node NODE --pki DIR --pid PID [--seconds 60]
//       holds a lease (renewed every second) and the agent's 1 Hz telemetry
//       (workload_start with only a metrics dir: the counters push runs,
//       no workload), and reads the agent's CPU and RSS from /proc over
//       `seconds`
#include <atomic>
#include <filesystem>
#include <thread>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <CLI/CLI.hpp>
#include <boost/asio.hpp>

#include "bench/bench_util.h"
#include "bench/flap_wire.h"
#include "common/core/log.h"
#include "common/tls/certs.h"
#include "harness/controller/agent_link.h"

namespace fdrill::bench {
namespace {

struct Target {
  std::string agent, node, pki;
};

// The controller's side: an io thread, one link, a lease renewed every second.
class Controller {
 public:
  explicit Controller(const Target& t) : tls_(TlsConfig::InDir(t.pki, "controller")) {
    auto colon = t.agent.rfind(':');
    link_ = std::make_unique<AgentLink>(io_, t.node, t.agent.substr(0, colon),
                                        static_cast<uint16_t>(std::stoi(t.agent.substr(colon + 1))),
                                        &tls_);
    link_->set_on_push([this](const Json& m) {
      if (m.value("type", "") == "counters") ++counters_;
    });
    io_thread_ = std::thread([this] { io_.run(); });
  }
  ~Controller() {
    stop_ = true;
    if (renewer_.joinable()) renewer_.join();
    if (connected_) (void)link_->Call("lease", {{"ttl_ms", 0}}, std::chrono::seconds(2));
    link_->Close();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    work_.reset();
    io_.stop();
    io_thread_.join();
  }

  Status Start() {
    if (auto s = link_->Connect(std::chrono::seconds(10)); !s.ok()) return s;
    connected_ = true;
    if (auto r = Call("lease", {{"ttl_ms", 5000}}); !r.ok()) return r.status();
    renewer_ = std::thread([this] {
      while (!stop_) {
        for (int i = 0; i < 10 && !stop_; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (!stop_) (void)Call("lease", {{"ttl_ms", 5000}});
      }
    });
    return Status::Ok();
  }
  Result<Json> Call(const std::string& type, Json body) {
    return link_->Call(type, std::move(body), std::chrono::seconds(10));
  }
  int counters() const { return counters_; }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  TlsConfig tls_;
  std::unique_ptr<AgentLink> link_;
  std::thread io_thread_, renewer_;
  std::atomic<bool> stop_{false};
  std::atomic<int> counters_{0};
  bool connected_ = false;
};

int Pki(const std::string& dir, const std::string& node) {
  std::filesystem::create_directories(dir);
  for (auto s : {InitCa(dir), IssueCert(dir, node, dir, CertRole::kNode),
                 IssueCert(dir, "controller", dir, CertRole::kController)}) {
    if (!s.ok()) return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 2;
  }
  return 0;
}

int Inject(const Target& t, int count, const std::string& iface) {
  Controller c(t);
  if (auto s = c.Start(); !s.ok()) return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 2;
  std::printf(
      "| fault | applies | apply→verified p50 | p99 | max | revert→verified p50 | p99 | unverified "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  struct Kind {
    const char* name;
    Json params;
  };
  std::vector<Kind> kinds = {{"link_rate", {{"interface", iface}, {"rate", "100mbit"}}},
                             {"link_flap", {{"interface", iface}, {"down", "10s"}, {"count", 1}}}};
  int bad = 0;
  for (const auto& k : kinds) {
    std::vector<double> apply, revert;
    int unverified = 0;
    for (int i = 0; i < count; ++i) {
      std::string id = std::string(k.name) + "-" + std::to_string(i);
      auto t0 = SteadyClock::now();
      auto a = c.Call(
          "apply",
          {{"fault_id", id}, {"kind", k.name}, {"params", k.params}, {"max_duration_ms", 60000}});
      auto t1 = SteadyClock::now();
      auto r = c.Call("revert", {{"fault_id", id}});
      auto t2 = SteadyClock::now();
      if (!a.ok() || !r.ok()) {
        std::fprintf(stderr, "%s: %s\n", id.c_str(),
                     (a.ok() ? r.status() : a.status()).ToString().c_str());
        return 1;
      }
      if (!a->value("verified", false)) ++unverified;
      apply.push_back(Ms(t1 - t0));
      revert.push_back(Ms(t2 - t1));
    }
    bad += unverified;
    std::printf("| %s | %d | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %d |\n", k.name,
                count, Percentile(apply, 50), Percentile(apply, 99), Percentile(apply, 100),
                Percentile(revert, 50), Percentile(revert, 99), unverified);
    std::fflush(stdout);
  }
  return bad > 0 ? 1 : 0;
}

int FlapWire(const Target& t, const WireStream& stream, int count, int down_ms,
             const std::string& iface) {
  Controller c(t);
  if (auto s = c.Start(); !s.ok()) return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 2;
  WireProbe probe(stream);
  if (!probe.Start()) return 2;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const Json params = {
      {"interface", iface}, {"down", std::to_string(down_ms) + "ms"}, {"count", 1}};
  for (int i = 0; i < count; ++i) {
    const std::string id = "wire-" + std::to_string(i);
    auto a = c.Call(
        "apply",
        {{"fault_id", id}, {"kind", "link_flap"}, {"params", params}, {"max_duration_ms", 60000}});
    if (!a.ok())
      return std::fprintf(stderr, "%s: %s\n", id.c_str(), a.status().ToString().c_str()), 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(down_ms + 300));
    auto r = c.Call("revert", {{"fault_id", id}});
    if (!r.ok())
      return std::fprintf(stderr, "%s: %s\n", id.c_str(), r.status().ToString().c_str()), 1;
    // Flaps 0.6 s apart (0.2 s after each revert) showed, here, stalls of
    // up to 1.9 s after some up edges: the peer's return to service
    // (carrier, neighbour resolution), not the flap's length. 1.2 s after
    // each revert measures the flap alone.
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  }
  probe.Stop();
  // A gap of at least half the flap is one; the stream's own hiccups on a
  // busy box are far shorter.
  const std::vector<WireFlap> flaps = probe.Flaps(std::chrono::milliseconds(down_ms / 2));
  std::vector<double> gaps, error, pauses;
  for (const WireFlap& f : flaps) {
    gaps.push_back(f.gap_ms);
    error.push_back(std::abs(f.gap_ms - down_ms));
    if (f.sender_seen) pauses.push_back(std::max(f.down_pause_ms, f.up_pause_ms));
  }
  int within = 0;  // issue 25's bound: the flap's length +- 2 ms
  for (double e : error) within += e <= 2.0 ? 1 : 0;
  std::printf(
      "| flaps | gaps seen | within +-2 ms | datagrams | gap p50 | gap max | abs error p50 | p99 "
      "| max | sender's pause at an edge: max |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  if (gaps.empty()) {
    std::printf("| %d | 0 | 0 | %zu | - | - | - | - | - | - |\n", count, probe.received());
    return 1;
  }
  char pause_max[32] = "-";
  if (!pauses.empty())
    std::snprintf(pause_max, sizeof(pause_max), "%.2f ms", Percentile(pauses, 100));
  std::printf("| %d | %zu | %d | %zu | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %s |\n",
              count, gaps.size(), within, probe.received(), Percentile(gaps, 50),
              Percentile(gaps, 100), Percentile(error, 50), Percentile(error, 99),
              Percentile(error, 100), pause_max);
  // A flap off by more than 2 ms: was the sender late at an edge (the
  // probe's error), or on time (the link's)?
  std::printf("\nsender at real-time priority: %s\n", probe.realtime() ? "yes" : "no (not root)");
  for (size_t i = 0; i < flaps.size(); ++i) {
    if (error[i] <= 2.0) continue;
    if (!flaps[i].sender_seen) {
      std::printf("flap %zu: gap %.2f ms; no refused send matched it\n", i, flaps[i].gap_ms);
      continue;
    }
    // The link was down for at least the gap less the sender's pauses at
    // its edges, and at most the gap.
    const double least = flaps[i].gap_ms - flaps[i].down_pause_ms - flaps[i].up_pause_ms;
    const bool sender = flaps[i].gap_ms > down_ms && least <= down_ms + 2.0;
    std::printf(
        "flap %zu: gap %.2f ms; the sender's pause at the down edge %.2f ms, at the up edge %.2f "
        "ms: the link was down %.2f-%.2f ms (%s)\n",
        i, flaps[i].gap_ms, flaps[i].down_pause_ms, flaps[i].up_pause_ms, least, flaps[i].gap_ms,
        sender ? "the sender's lateness can account for the error" : "the link's outage was off");
  }
  return gaps.size() == static_cast<size_t>(count) ? 0 : 1;
}

int Footprint(const Target& t, int pid, int seconds) {
  Controller c(t);
  if (auto s = c.Start(); !s.ok()) return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 2;
  std::string metrics = "/tmp/fdp-footprint-" + std::to_string(getpid());
  if (auto r = c.Call("workload_start", {{"metrics_dir", metrics}}); !r.ok()) {
    return std::fprintf(stderr, "%s\n", r.status().ToString().c_str()), 2;
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));  // settle
  ProcCpu a = ReadProcCpu(pid);
  int pushes0 = c.counters();
  auto w0 = SteadyClock::now();
  long rss_max = 0;
  for (int i = 0; i < seconds; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    rss_max = std::max(rss_max, ProcStatusKib(pid, "VmRSS"));
  }
  double wall = Ms(SteadyClock::now() - w0) / 1000;
  ProcCpu b = ReadProcCpu(pid);
  int pushes = c.counters() - pushes0;
  (void)c.Call("workload_stop", {});
  std::filesystem::remove_all(metrics);
  std::printf(
      "| seconds | counters pushes/s | RSS max | VmHWM | agent CPU | agent + its tc/ip children "
      "CPU |\n");
  std::printf("|---|---|---|---|---|---|\n");
  std::printf("| %.0f | %.2f | %.1f MiB | %.1f MiB | %.3f %% | %.3f %% |\n", wall, pushes / wall,
              rss_max / 1024.0, ProcStatusKib(pid, "VmHWM") / 1024.0,
              100 * (b.self_s - a.self_s) / wall,
              100 * (b.self_s + b.children_s - a.self_s - a.children_s) / wall);
  return 0;
}

}  // namespace
}  // namespace fdrill::bench

int main(int argc, char** argv) {
  using namespace fdrill::bench;
  CLI::App app{"agent_bench: injection latency and idle footprint of one real fdrill-agent"};
  app.require_subcommand(1);
  std::string dir, node;
  auto* pki =
      app.add_subcommand("pki", "make a CA and certificates for NODE and controller in DIR");
  pki->add_option("dir", dir)->required();
  pki->add_option("node", node)->required();
  Target t;
  int count = 200, pid = 0, seconds = 60;
  std::string iface = "fab0";
  auto* inject = app.add_subcommand("inject", "apply->verified latency of link_rate and link_flap");
  auto* foot = app.add_subcommand("footprint", "idle RSS and CPU with 1 Hz telemetry");
  auto* wire = app.add_subcommand("flapwire", "a link_flap's length on the wire");
  WireStream stream;
  int down_ms = 100;
  for (auto* s : {inject, foot, wire}) {
    s->add_option("--agent", t.agent, "ADDR:PORT")->required();
    s->add_option("--node", t.node)->required();
    s->add_option("--pki", t.pki, "dir with ca.pem, controller.pem, controller.key")->required();
  }
  inject->add_option("--count", count)->capture_default_str();
  inject->add_option("--interface", iface)->capture_default_str();
  foot->add_option("--pid", pid, "the agent's pid")->required();
  wire->add_option("--sender-ns", stream.sender_ns, "the agent's network namespace")->required();
  wire->add_option("--receiver-ns", stream.receiver_ns, "the peer's")->required();
  wire->add_option("--to", stream.to, "the peer's address")->required();
  wire->add_option("--count", count)->capture_default_str();
  wire->add_option("--down-ms", down_ms)->capture_default_str();
  wire->add_option("--interface", iface)->capture_default_str();
  foot->add_option("--seconds", seconds)->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  fdrill::InitLogging("agent_bench", "warn");
  if (pki->parsed()) return Pki(dir, node);
  if (inject->parsed()) return Inject(t, count, iface);
  if (wire->parsed()) return FlapWire(t, stream, count, down_ms, iface);
  return Footprint(t, pid, seconds);
}

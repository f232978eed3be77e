// fanout_bench: the controller against N agents (issue 9, "controller scale").
//
//   build/bin/fanout_bench --agent-bin build/bin/fdrill-agent --agents 100,1000,3000,10000
//
// For each N it starts `fdrill-agent --fake-host --fake-agents K` processes
// (N fake agents on 127.1.0.1.. in all, K = 5,000 a process at most: the fd
// limit; each agent its own listener, TLS certificate, journal and lease;
// agents/fake_fleet.h), then, as the controller does, dials every
// agent over mutual TLS (AgentLink), takes a lease on each and renews it
// every second on a thread of its own (a tenth of the agents every 100 ms,
// as DrillAgents does), and runs `rounds` fan-outs: apply a
// link_rate fault on every agent at once (AgentLink::CallAsync, one request
// in flight per agent), wait for every reply, then revert it everywhere.
//
// Printed per N, all from this one run:
//   apply / revert fan-out: time from the first request sent to the last
//     reply, p50 and p99 over rounds; per-agent reply time p99 (pooled);
//   lease ack: from each renewal sent to the push that acknowledged it,
//     p99 (pooled): up to a second by design (the agent's next counters
//     push carries it);
//   controller CPU: this process's CPU time / wall time while fanning out
//     back to back (cores), and while only renewing leases (idle);
//   the fleet's own CPU over the fan-outs, and while only renewing leases
//     (cores): on a real cluster that work is spread over N machines; here
//     a few processes on a 2-core box do it all, so a fan-out can never be
//     faster than the fleet's CPU time per round (printed), and what the
//     fleet spends idle (renewals, counters samples and pushes, ticks) the
//     fan-out does not get;
//   controller RSS: this process's VmRSS after the fan-outs, less this
//     bench's own samples (every reply's and renewal's time, kept for the
//     percentiles: ~1.2 M doubles, ~10 MiB, at 10,000 agents and 20
//     rounds), which are not the controller's memory.
// State (journals, certificates) lives under --dir, default /dev/shm: on a
// real cluster each agent fsyncs its own disk; 10,000 fsyncs on one shared
// disk would measure that disk, not the controller.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <CLI/CLI.hpp>
#include <boost/asio.hpp>
#include <fmt/format.h>

#include "agents/fake_fleet.h"
#include "bench/bench_util.h"
#include "bench/fanout_floor.h"
#include "common/core/json.h"
#include "common/core/log.h"
#include "common/tls/certs.h"
#include "common/wire/protocol.h"
#include "harness/controller/agent_link.h"
#include "harness/controller/connect_all.h"
#include "harness/controller/drill_agents.h"
#include "harness/controller/lease_renewals.h"

namespace fdrill::bench {
namespace {

struct Options {
  std::string agent_bin = "build/bin/fdrill-agent";
  std::string dir = "/dev/shm/fdp-fanout";
  std::string first = "127.1.0.1";
  int port = 7310;
  int rounds = 30;
  int idle_s = 3;
  size_t lease_slices = DrillAgents::kLeaseSlices;
  // Agents per fake-fleet process; 0: spread over every core (a real
  // cluster's agents work in parallel), at most 5,000 a process (its fd
  // limit: ~3 fds per agent).
  int per_process = 0;
  std::string self;  // this binary: the floor's echo peer
};

// What one N measured, for the table and the targets.
struct Row {
  int n = 0;
  double connect_s = 0, apply_p99_ms = 0, ctl_rss_mib = 0;
  Floor floor;
};
std::vector<Row> rows;

// Sends `type` to every link at once; returns each agent's reply time (ms
// from the first send) and the number of failures.
struct FanOut {
  std::vector<double> reply_ms;
  double total_ms = 0;
  int failed = 0;
  std::string first_error;
};

FanOut Fan(std::vector<std::unique_ptr<AgentLink>>& links, const std::string& type,
           const std::function<Json(size_t)>& body, const std::function<bool(const Json&)>& good) {
  FanOut out;
  out.reply_ms.assign(links.size(), 0);
  std::mutex mu;
  std::condition_variable cv;
  size_t left = links.size();
  auto t0 = SteadyClock::now();
  for (size_t i = 0; i < links.size(); ++i) {
    links[i]->CallAsync(type, body(i), [&, i](Result<Json> r) {
      double ms = Ms(SteadyClock::now() - t0);
      std::lock_guard<std::mutex> lock(mu);
      out.reply_ms[i] = ms;
      if (!r.ok() || !good(*r)) {
        if (out.failed++ == 0) out.first_error = r.ok() ? DumpJson(*r) : r.status().ToString();
      }
      if (--left == 0) cv.notify_one();
    });
  }
  std::unique_lock<std::mutex> lock(mu);
  if (!cv.wait_for(lock, std::chrono::seconds(120), [&] { return left == 0; })) {
    // Late replies would land in this frame once it is gone: stop here (the
    // fleet gets SIGTERM through PR_SET_PDEATHSIG).
    std::fprintf(stderr, "%s: no reply within 120 s from %zu of %zu agents\n", type.c_str(), left,
                 links.size());
    std::_Exit(2);
  }
  out.total_ms = Ms(SteadyClock::now() - t0);
  return out;
}

int RunOne(const Options& o, int n) {
  std::string dir = o.dir + "/" + std::to_string(n);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir + "/pki", ec);
  if (auto s = InitCa(dir + "/pki"); !s.ok())
    return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 2;
  if (auto s = IssueCert(dir + "/pki", "controller", dir + "/pki", CertRole::kController);
      !s.ok()) {
    return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 2;
  }
  auto listen = o.first + ":" + std::to_string(o.port);
  auto t_start = SteadyClock::now();
  std::vector<std::unique_ptr<Child>> fleets;
  int per_process = o.per_process;
  if (per_process <= 0) {
    const int cores = std::max(1u, std::thread::hardware_concurrency());
    rlimit lim{};
    getrlimit(RLIMIT_NOFILE, &lim);  // a child inherits the hard limit
    per_process = std::min(fdrill::MaxFakeAgents(lim.rlim_max), (n + cores - 1) / cores);
  }
  for (int first = 0; first < n; first += per_process) {
    int count = std::min(per_process, n - first);
    fleets.push_back(std::make_unique<Child>(std::vector<std::string>{
        o.agent_bin, "--fake-host", "--fake-agents", std::to_string(count), "--fake-first-index",
        std::to_string(first), "--fake-ca", dir + "/pki", "--listen", listen, "--state-dir",
        dir + "/state", "--log-level", "warn"}));
  }
  for (auto& fleet : fleets) {
    if (!fleet->WaitFor("fake agents ready", std::chrono::seconds(600))) {
      std::fprintf(stderr, "N=%d: the fake fleet did not start (see its stderr)\n", n);
      return 2;
    }
  }
  double fleet_start_s = Ms(SteadyClock::now() - t_start) / 1000;
  // The floor first, before the links hold their descriptors.
  Row row;
  row.n = n;
  row.floor = MeasureFloor(o.self, static_cast<uint16_t>(o.port + 1), n, o.rounds);
  if (!row.floor.ok) {
    std::fprintf(stderr, "N=%d: the plain-TCP floor: %s\n", n, row.floor.error.c_str());
    return 2;
  }

  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });
  TlsConfig tls = TlsConfig::InDir(dir + "/pki", "controller");
  std::vector<std::unique_ptr<AgentLink>> links;
  for (int i = 0; i < n; ++i) {
    links.push_back(std::make_unique<AgentLink>(io, FakeAgentNode("f", i),
                                                FakeAgentAddress(o.first, i),
                                                static_cast<uint16_t>(o.port), &tls));
  }
  auto fleet_cpu = [&] {
    double s = 0;
    for (auto& f : fleets) s += ReadProcCpu(f->pid()).self_s;
    return s;
  };
  // Dial as `fdrill run` does (harness/controller/connect_all.h). The CPU
  // both ends spend on it: the handshakes are most of it, and the two share
  // this box's cores where a cluster's agents each have their own.
  const double ctl_cpu_conn0 = SelfCpuSeconds(), fleet_cpu_conn0 = fleet_cpu();
  auto t_conn = SteadyClock::now();
  std::vector<AgentLink*> raw;
  for (auto& l : links) raw.push_back(l.get());
  int conn_failed = 0;
  std::string conn_error;
  for (const Status& s : ConnectAll(raw, std::chrono::seconds(30))) {
    if (!s.ok() && conn_failed++ == 0) conn_error = s.ToString();
  }
  double connect_s = Ms(SteadyClock::now() - t_conn) / 1000;
  const double ctl_cpu_conn = SelfCpuSeconds() - ctl_cpu_conn0;
  const double fleet_cpu_conn = fleet_cpu() - fleet_cpu_conn0;
  if (conn_failed > 0) {
    std::fprintf(stderr, "N=%d: %d agents did not connect; first: %s\n", n, conn_failed,
                 conn_error.c_str());
    return 2;
  }
  auto ok = [](const Json&) { return true; };
  auto lease = [](size_t) { return Json{{"ttl_ms", 5000}}; };
  if (auto f = Fan(links, "lease", lease, ok); f.failed) {
    std::fprintf(stderr, "N=%d: lease: %s\n", n, f.first_error.c_str());
    return 2;
  }
  // Renew every second, as the drill's lease loop does (DrillAgents::
  // LeaseLoop): a tenth of the agents every tenth of a second
  // (DrillAgents::kLeaseSlices), without waiting for the answers, each
  // renewal to be acknowledged in the agent's next push (within the second;
  // a refusal replies). The time from a renewal's send to its
  // acknowledgement lands in lease_ms (on the io thread, which is joined
  // before these go): most of it is the wait for the agent's counters push,
  // by design, not a round trip. A failure is a refusal, or a lease the
  // drill would give up on (LeaseRenewals' failed renewal with the lease
  // possibly lapsing before the next: DrillAgents' on_lost); an
  // acknowledgement late by a turn is not.
  std::atomic<bool> stop{false};
  std::mutex lease_mu;
  int lease_failed = 0;           // under lease_mu
  std::string lease_first_error;  // under lease_mu: what the first lease failure was
  std::vector<double> lease_ms;   // under lease_mu
  auto renewals = std::make_shared<LeaseRenewals>(links.size(), SteadyClock::now());
  for (size_t i = 0; i < links.size(); ++i) {
    links[i]->set_on_push([&, i](const Json& m) {
      auto ack = LeaseRenewals::AckIn(m, "");  // this bench's lease names no drill
      if (!ack) return;
      auto sent = renewals->Acked(i, *ack);
      if (!sent) return;
      std::lock_guard<std::mutex> lock(lease_mu);
      lease_ms.push_back(Ms(SteadyClock::now() - *sent));
    });
  }
  // The drill's defaults: a 5 s lease renewed every second.
  constexpr auto kTtl = std::chrono::seconds(5), kRenew = std::chrono::seconds(1);
  auto renewal_body = [&](uint64_t renewal) {
    return Json{{proto::key::kTtlMs, std::chrono::milliseconds(kTtl).count()},
                {proto::key::kAck, proto::key::kAckPush},
                {proto::key::kRenewal, renewal},
                {proto::key::kAckWithinMs, std::chrono::milliseconds(kRenew).count()}};
  };
  std::thread renewer([&] {
    const size_t slices = std::min(links.size(), o.lease_slices);
    const auto step = std::chrono::milliseconds(kRenew) / static_cast<int64_t>(slices);
    auto next_at = SteadyClock::now();
    renewals->Restart(next_at);
    for (size_t slice = 0; !stop; slice = (slice + 1) % slices) {
      next_at += step;
      std::this_thread::sleep_until(next_at);
      if (stop) break;
      for (size_t i = slice; i < links.size(); i += slices) {
        const LeaseRenewals::Turn turn = renewals->TakeTurn(i, "1s");
        if (turn.forget != 0) links[i]->Forget(turn.forget);
        const auto now = SteadyClock::now();
        const uint64_t seq = renewals->Sent(i, now);
        if (turn.Lost(now, kRenew, kTtl)) {
          std::lock_guard<std::mutex> lock(lease_mu);
          if (lease_failed++ == 0) {
            lease_first_error = links[i]->node() +
                                ": lease renewal unanswered for two turns, the lease may lapse "
                                "before the next";
          }
        }
        const uint64_t id =
            links[i]->CallAsync("lease", renewal_body(seq), [&, i, seq](Result<Json> r) {
              renewals->Replied(i, seq, r);
              std::lock_guard<std::mutex> lock(lease_mu);
              if (!r.ok() && lease_failed++ == 0)
                lease_first_error =
                    links[i]->node() + ": lease renewal refused: " + r.status().ToString();
            });
        renewals->CallId(i, seq, id);
      }
    }
  });

  // Idle: leases only.
  double c0 = SelfCpuSeconds(), idle_f0 = fleet_cpu();
  auto w0 = SteadyClock::now();
  std::this_thread::sleep_for(std::chrono::seconds(o.idle_s));
  const double idle_s = Ms(SteadyClock::now() - w0) / 1000;
  double idle_cores = (SelfCpuSeconds() - c0) / idle_s;
  // The fleet's own idle second: renewals answered, counters sampled and
  // pushed, ticks (on a cluster each agent's share is on its own node).
  const double fleet_idle_cores = (fleet_cpu() - idle_f0) / idle_s;

  std::vector<double> apply_total, revert_total, apply_reply, revert_reply;
  int failures = 0;
  std::string first_error;
  auto fleet_rss_kib = [&] {
    long kib = 0;
    for (auto& f : fleets) kib += ProcStatusKib(f->pid(), "VmRSS");
    return kib;
  };
  double f0 = fleet_cpu();
  c0 = SelfCpuSeconds();
  w0 = SteadyClock::now();
  for (int r = 0; r < o.rounds; ++r) {
    std::string id = "fanout-" + std::to_string(r);
    auto a = Fan(
        links, "apply",
        [&](size_t) {
          return Json{{"fault_id", id},
                      {"kind", "link_rate"},
                      {"params", {{"interface", "fab0"}, {"rate", "100mbit"}}}};
        },
        [](const Json& j) { return j.value("verified", false); });
    auto v = Fan(
        links, "revert",
        [&](size_t) {
          return Json{{"fault_id", id}};
        },
        [](const Json& j) { return j.value("was_applied", false); });
    apply_total.push_back(a.total_ms);
    revert_total.push_back(v.total_ms);
    apply_reply.insert(apply_reply.end(), a.reply_ms.begin(), a.reply_ms.end());
    revert_reply.insert(revert_reply.end(), v.reply_ms.begin(), v.reply_ms.end());
    failures += a.failed + v.failed;
    if (first_error.empty()) first_error = !a.first_error.empty() ? a.first_error : v.first_error;
  }
  double wall_s = Ms(SteadyClock::now() - w0) / 1000;
  double busy_cores = (SelfCpuSeconds() - c0) / wall_s;
  double ctl_cpu_ms_per_round = (SelfCpuSeconds() - c0) * 1000 / o.rounds;
  double fleet_ms_per_round = (fleet_cpu() - f0) * 1000 / o.rounds;
  long ctl_rss = ProcStatusKib(getpid(), "VmRSS"), fleet_rss = fleet_rss_kib();
  // What the samples fill, not their capacity: a vector's untouched tail
  // is not resident, so this never takes off more than they hold.
  size_t samples_held =
      apply_total.size() + revert_total.size() + apply_reply.size() + revert_reply.size();
  {
    std::lock_guard<std::mutex> lock(lease_mu);
    samples_held += lease_ms.size();
  }
  ctl_rss -= static_cast<long>(samples_held * sizeof(double) / 1024);
  std::fprintf(stderr, "N=%d: ctl RSS leaves out the bench's own %zu samples (%.1f MiB)\n", n,
               samples_held, samples_held * sizeof(double) / 1048576.0);
  int lease_failures = 0;
  double lease_p99 = 0;
  {
    std::lock_guard<std::mutex> lock(lease_mu);
    lease_failures = lease_failed;
    lease_p99 = Percentile(lease_ms, 99);
    if (first_error.empty()) first_error = lease_first_error;
  }

  stop = true;
  renewer.join();
  Fan(
      links, "lease",
      [](size_t) {
        return Json{{"ttl_ms", 0}};
      },
      ok);
  for (auto& l : links) l->Close();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  work.reset();
  io.stop();
  io_thread.join();
  links.clear();
  int status = 0;
  for (auto& f : fleets) status |= f->Stop();

  row.connect_s = connect_s;
  row.apply_p99_ms = Percentile(apply_total, 99);
  row.ctl_rss_mib = ctl_rss / 1024.0;
  rows.push_back(row);
  std::printf(
      "| %6d | %zu | %5.1f s | %5.2f s | %5.2f s | %5.2f / %5.2f s | %8.1f | %8.1f | %8.1f | %8.1f "
      "| "
      "%8.1f | %8.1f | "
      "%8.1f | %5.2f | %5.1f | "
      "%5.3f | %5.3f | %8.1f | "
      "%6.0f | %6.0f | %4d |\n",
      n, fleets.size(), fleet_start_s, row.floor.connect_s, connect_s, ctl_cpu_conn, fleet_cpu_conn,
      row.floor.echo_p99_ms, Percentile(apply_total, 50), Percentile(apply_total, 99),
      Percentile(apply_reply, 99), Percentile(revert_total, 50), Percentile(revert_total, 99),
      lease_p99, busy_cores, ctl_cpu_ms_per_round, idle_cores, fleet_idle_cores, fleet_ms_per_round,
      ctl_rss / 1024.0, fleet_rss / 1024.0, failures + lease_failures);
  std::fflush(stdout);
  if (failures + lease_failures > 0)
    std::fprintf(stderr, "N=%d: first failure: %s\n", n, first_error.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    std::fprintf(stderr, "N=%d: fleet exit status %d\n", n, status);
  std::filesystem::remove_all(dir, ec);
  return failures + lease_failures > 0 ? 1 : 0;
}

// Issue 24's targets against this run's figures, each with its floor.
void PrintTargets() {
  struct Target {
    int n;
    const char* what;
    double limit;
    double Row::*value;
    const char* unit;
  };
  const Target targets[] = {
      {1000, "connect all", 2, &Row::connect_s, "s"},
      {10000, "connect all", 10, &Row::connect_s, "s"},
      {1000, "apply p99", 100, &Row::apply_p99_ms, "ms"},
      {10000, "apply p99", 1000, &Row::apply_p99_ms, "ms"},
      {10000, "controller RSS", 256, &Row::ctl_rss_mib, "MiB"},
  };
  std::printf("\ntargets (issue 24), this run:\n");
  for (const auto& t : targets) {
    auto row = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.n == t.n; });
    if (row == rows.end()) {
      std::printf("  %-15s at %6d: not run (add %d to --agents)\n", t.what, t.n, t.n);
      continue;
    }
    const double v = (*row).*t.value;
    std::string floor;
    if (t.value == &Row::connect_s) {
      floor = fmt::format(" (floor {:.2f} s, x{:.1f})", row->floor.connect_s,
                          v / std::max(row->floor.connect_s, 1e-9));
    } else if (t.value == &Row::apply_p99_ms) {
      floor = fmt::format(" (floor {:.1f} ms, x{:.1f})", row->floor.echo_p99_ms,
                          v / std::max(row->floor.echo_p99_ms, 1e-9));
    }
    std::printf("  %-15s at %6d: %8.2f %-3s <= %6.0f %-3s %s%s\n", t.what, t.n, v, t.unit, t.limit,
                t.unit, v <= t.limit ? "met" : "NOT MET", floor.c_str());
  }
}

}  // namespace
}  // namespace fdrill::bench

int main(int argc, char** argv) {
  using namespace fdrill::bench;
  Options o;
  std::string agents = "100,1000,3000,10000";
  CLI::App app{"fanout_bench: controller fan-out apply/revert and CPU against N fake agents"};
  app.add_option("--agent-bin", o.agent_bin, "fdrill-agent to run as the fake fleet")
      ->capture_default_str();
  app.add_option("--agents", agents, "comma-separated N")->capture_default_str();
  app.add_option("--rounds", o.rounds, "apply+revert fan-outs per N")->capture_default_str();
  app.add_option("--lease-slices", o.lease_slices,
                 "renew a 1/Nth of the leases every 1/Nth of a second (1: all at once, as before "
                 "DrillAgents spread them)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--idle-seconds", o.idle_s, "lease-only seconds measured per N")
      ->capture_default_str();
  app.add_option("--per-process", o.per_process, "fake agents per fleet process")
      ->capture_default_str();
  app.add_option("--dir", o.dir, "state and certificates (tmpfs: see the header)")
      ->capture_default_str();
  app.add_option("--first-address", o.first, "first fake agent's address")->capture_default_str();
  app.add_option("--port", o.port, "fake agents' port (the floor's echo peer: PORT+1)")
      ->capture_default_str();
  int echo_port = 0;
  app.add_option("--echo-server", echo_port, "run as the floor's echo peer on 127.0.0.1:PORT");
  CLI11_PARSE(app, argc, argv);
  if (echo_port > 0) return RunEchoServer(static_cast<uint16_t>(echo_port));
  std::error_code self_ec;
  o.self = std::filesystem::read_symlink("/proc/self/exe", self_ec).string();
  fdrill::InitLogging("fanout_bench", "warn");
  rlimit lim{65536, 65536};
  if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
    getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  std::printf(
      "rounds per N: %d (apply then revert of link_rate on every agent); times in ms; CPU in "
      "cores\n\n",
      o.rounds);
  std::printf(
      "| N | fleet processes | fleet start | floor: TCP connect all | connect all | connect CPU: "
      "ctl / fleet | floor: TCP "
      "echo "
      "fan-out p99 | apply p50 | apply p99 | per-agent apply p99 | revert p50 "
      "| revert p99 | "
      "lease ack p99 | ctl cores fanning out | ctl CPU ms/round | ctl cores idle (leases) | "
      "fleet cores idle | fleet CPU ms/round | "
      "ctl RSS MiB | fleet RSS MiB | failures |\n");
  std::printf(
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  int rc = 0;
  std::stringstream list(agents);
  for (std::string item; std::getline(list, item, ',');) rc |= RunOne(o, std::stoi(item));
  PrintTargets();
  // Each N's directory is gone (RunOne); the root too, when nothing else
  // is in it (remove() leaves a directory that is not empty).
  std::error_code rm_ec;
  std::filesystem::remove(o.dir, rm_ec);
  return rc;
}

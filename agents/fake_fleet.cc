#include "agents/fake_fleet.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it
#include <vector>

#include <boost/asio.hpp>

#include "agents/agent_service.h"
#include "agents/fake_host.h"
#include "agents/server.h"
#include "common/core/log.h"
#include "common/tls/certs.h"
#include "common/tls/tls_context.h"

namespace fdrill {

namespace asio = boost::asio;

std::string FakeAgentAddress(const std::string& first, int i) {
  boost::system::error_code ec;
  auto a = asio::ip::make_address_v4(first, ec);
  if (ec || i < 0) return "";
  uint32_t base = a.to_uint();
  uint32_t host = base & 0xff;
  if (host == 0 || host == 255) return "";
  uint64_t total = (host - 1) + static_cast<uint64_t>(i);
  uint64_t addr = (base & 0xffffff00u) + (total / 254) * 256 + (total % 254) + 1;
  if ((addr >> 24) != 127) return "";
  return asio::ip::address_v4(static_cast<uint32_t>(addr)).to_string();
}

namespace {

struct Member {
  std::string node, address;
  FakeHost fake;
  std::unique_ptr<AgentService> service;
  std::unique_ptr<SslContext> ssl;
  std::unique_ptr<AgentServer> server;
};

Result<std::string> Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Status WriteFile(const std::string& path, const std::string& text, std::filesystem::perms mode) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !(out << text)) return FailedPrecondition("cannot write " + path);
  out.close();
  std::error_code ec;
  std::filesystem::permissions(path, mode, ec);
  return Status::Ok();
}

// Raises RLIMIT_NOFILE to what `agents` need (never lowers it); the limit it
// got.
rlim_t RaiseFdLimit(int agents) {
  rlim_t want = static_cast<rlim_t>(agents) * kFakeAgentFds + kFakeFleetFdSlack;
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  if (lim.rlim_cur >= want) return lim.rlim_cur;
  if (lim.rlim_max < want) {
    rlimit raised{want, want};
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
      return want;  // CAP_SYS_RESOURCE may raise the hard limit
  }
  lim.rlim_cur = std::min(want, lim.rlim_max);
  setrlimit(RLIMIT_NOFILE, &lim);
  return lim.rlim_cur;
}

Status Build(const FakeFleetConfig& c, const Clock& clock, asio::io_context& io, Member& m,
             const PemPair* ca) {
  std::string dir = c.state_dir + "/" + m.node;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return FailedPrecondition("cannot create " + dir + ": " + ec.message());
  AgentConfig config;
  config.node = m.node;
  config.state_dir = dir;
  config.mgmt_interface = "mgmt0";  // the fake machine's; lo is refused anyway
  config.allowlist = c.allowlist;
  config.tmpdir = dir;
  m.service = std::make_unique<AgentService>(config, m.fake.host(), clock);
  if (auto swept = m.service->SweepAtStart(); !swept.ok()) return swept.status().Annotate(m.node);
  if (ca != nullptr) {
    auto leaf = MakeLeaf(*ca, m.node, CertRole::kNode);
    if (!leaf.ok()) return leaf.status().Annotate(m.node);
    std::filesystem::create_directories(dir + "/tls", ec);
    TlsConfig tls{c.ca_dir + "/ca.pem", dir + "/tls/" + m.node + ".pem",
                  dir + "/tls/" + m.node + ".key"};
    if (auto s = WriteFile(tls.cert_file, leaf->cert, std::filesystem::perms(0644)); !s.ok())
      return s;
    if (auto s = WriteFile(tls.key_file, leaf->key, std::filesystem::perms(0600)); !s.ok())
      return s;
    auto ctx = MakeServerContext(tls);
    if (!ctx.ok()) return ctx.status().Annotate(m.node);
    m.ssl = std::move(ctx).value();
  }
  m.server = std::make_unique<AgentServer>(io, *m.service, m.ssl.get());
  return m.server->Listen(m.address, c.port);
}

}  // namespace

int RunFakeFleet(const FakeFleetConfig& c) {
  if (c.agents < 1) {
    spdlog::error("--fake-agents must be at least 1");
    return 2;
  }
  if (c.first_index < 0 ||
      FakeAgentAddress(c.first_address, c.first_index + c.agents - 1).empty()) {
    spdlog::error(
        "--listen {}: {} fake agents need consecutive 127.x.y.z addresses from there (not .0 or "
        ".255)",
        c.first_address, c.agents);
    return 2;
  }
  std::unique_ptr<PemPair> ca;
  if (!c.ca_dir.empty()) {
    auto cert = Slurp(c.ca_dir + "/ca.pem");
    auto key = Slurp(c.ca_dir + "/ca.key");
    if (!cert.ok() || !key.ok()) {
      spdlog::error("--fake-ca {}: {}", c.ca_dir,
                    (cert.ok() ? key.status() : cert.status()).message());
      return 2;
    }
    ca = std::make_unique<PemPair>(PemPair{*cert, *key});
  }
  rlim_t fds = RaiseFdLimit(c.agents);
  if (fds < static_cast<rlim_t>(c.agents) * kFakeAgentFds + kFakeFleetFdSlack) {
    spdlog::error(
        "{} fake agents need ~{} file descriptors and RLIMIT_NOFILE allows {}: serve at most {} "
        "per "
        "process (--fake-agents) and start more processes with --fake-first-index",
        c.agents, c.agents * kFakeAgentFds + kFakeFleetFdSlack, fds, MaxFakeAgents(fds));
    return 2;
  }
  RealClock clock;
  asio::io_context io(1);
  std::vector<std::unique_ptr<Member>> members;
  members.reserve(static_cast<size_t>(c.agents));
  for (int i = 0; i < c.agents; ++i) {
    auto m = std::make_unique<Member>();
    m->node = FakeAgentNode(c.node_prefix, c.first_index + i);
    m->address = FakeAgentAddress(c.first_address, c.first_index + i);
    if (auto s = Build(c, clock, io, *m, ca.get()); !s.ok()) {
      spdlog::error("fake agent {} of {}: {}", i, c.agents, s.ToString());
      return 2;
    }
    members.push_back(std::move(m));
  }
  // One ticker for the fleet: a timer per agent would be 500,000 wake-ups a
  // second at 10,000 agents. Each agent ticks at its own TickInterval (an
  // idle one every 100 ms, sooner when a fault's change is due), on the
  // fleet's 20 ms grid: the cadence a lone agent's server keeps. Each
  // agent's next tick is kept here, side by side (`due`): the grid step
  // reads one array, not 5,000 services' TickInterval (7 % of a fleet's CPU
  // at 10,000 agents). As a lone server's TickSoon does, a request brings
  // that agent's next tick forward to TickInterval() from then.
  using SteadyClock = std::chrono::steady_clock;
  std::vector<SteadyClock::time_point> due(members.size(), SteadyClock::now());
  for (size_t i = 0; i < members.size(); ++i) {
    AgentService& service = *members[i]->service;
    members[i]->server->set_after_request([&due, &service, i] {
      due[i] = std::min(due[i], SteadyClock::now() + service.TickInterval());
    });
    members[i]->server->Start(/*own_ticker=*/false);
  }
  bool stopping = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(io);
        auto next = SteadyClock::now();
        while (!stopping) {
          next += std::chrono::milliseconds(20);
          timer.expires_at(next);
          boost::system::error_code ec;
          co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
          const auto now = SteadyClock::now();
          // Half a grid step of slack: a 100 ms interval is 5 steps, not 6.
          const auto horizon = now + std::chrono::milliseconds(10);
          for (size_t i = 0; i < members.size(); ++i) {
            if (due[i] > horizon) continue;
            AgentService& service = *members[i]->service;
            TickOrDie(service);
            due[i] = now + service.TickInterval();
          }
        }
      },
      asio::detached);

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int sig) {
    spdlog::info("signal {}: reverting every fake agent and exiting", sig);
    stopping = true;
    for (auto& m : members) {
      m->service->RevertEverything("agent shutting down");
      m->server->StopAccepting();
    }
    io.stop();
  });
  spdlog::info("{} fake agents {}..{} on {}..{} port {} ({})", c.agents, members.front()->node,
               members.back()->node, members.front()->address, members.back()->address, c.port,
               ca ? "mutual TLS" : "PLAINTEXT");
  std::printf("fdrill-agent: %d fake agents ready\n", c.agents);
  std::fflush(stdout);
  io.run();
  return 0;
}

}  // namespace fdrill

// fdrill-agent: the per-node daemon. Reverts what its journal holds, then
// serves the controller on its management address until SIGTERM/SIGINT/SIGHUP, when
// it reverts every fault and stops its workload before exiting.
//
//   fdrill-agent --node n1 --listen 198.19.0.2:7100 --state-dir /var/lib/fdrill
//       --tls-ca /etc/fdrill/pki/ca.pem --tls-cert /etc/fdrill/pki/n1.pem --tls-key
//       /etc/fdrill/pki/n1.key
//   fdrill-agent --config /etc/fdrill/agent.conf  (the same, from a file: below)
//   fdrill-agent --state-dir DIR --revert-all     (undo everything, exit)
//   fdrill-agent --fake-host ...                  (no-op host: faults recorded, not applied)
//   fdrill-agent ... --metrics-listen 0.0.0.0:9477   (also serve Prometheus /metrics)
//   fdrill-agent --fake-host --fake-agents 1000 --fake-ca DIR --listen 127.1.0.1:7100 --state-dir
//   DIR
//       (1000 fake agents f0..f999 on 127.1.0.1.., one process; agents/fake_fleet.h)
//
// Serving needs either the three --tls-* files (mutual TLS: only clients
// whose cert the CA signed get in) or an explicit --insecure (plaintext);
// there is no default, so an agent never ends up open by omission.
//
// --config FILE: TOML-style `key = value` lines whose keys are the long flag
// names (`state-dir = "/var/lib/fdrill"`, `allow = ["eth1", "ranks"]`); the
// command line wins over the file. An unknown key, a missing or unreadable
// file, or a bad value is an error naming the file (packaging/agent.conf is
// the commented template the package installs as /etc/fdrill/agent.conf).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <CLI/CLI.hpp>
#include <boost/asio.hpp>

#include "agents/agent_service.h"
#include "agents/counters.h"
#include "agents/fake_fleet.h"
#include "agents/fake_host.h"
#include "agents/metrics_endpoint.h"
#include "agents/mgmt_interface.h"
#include "agents/server.h"
#include "common/core/log.h"
#include "common/core/version.h"
#include "common/host/launch_env.h"
#include "common/host/netlink_net_stack.h"
#include "common/host/real_nvml.h"
#include "common/host/real_process_runner.h"
#include "common/host/real_processes.h"
#include "common/host/real_verbs.h"
#include "common/host/tcp_sockets.h"
#include "common/tls/certs.h"
#include "common/tls/tls_context.h"
#include "injectors/injector.h"

int main(int argc, char** argv) {
  using namespace fdrill;
  CLI::App app{"fdrill-agent: applies and reverts faults on this node for the fdrill controller"};
  std::string node, listen = "0.0.0.0:7100", state_dir = "/var/lib/fdrill", log_level = "info";
  std::vector<std::string> allow, allow_kinds, deny_kinds, deny;
  std::string revoked;
  bool revert_all = false, insecure = false, fake_host = false;
  int fake_agents = 0, fake_first_index = 0;
  std::string fake_ca, telemetry_interval = "1s", metrics_listen;
  TlsConfig tls;
  app.add_option("--node", node, "this node's name in drills (default: hostname)");
  app.add_option("--listen", listen, "management address:port to serve on")->capture_default_str();
  app.add_option("--state-dir", state_dir, "journal and logs")->capture_default_str();
  app.add_option("--allow", allow,
                 "targets faults may touch: interfaces, and `ranks`, `cpu`, `memory` for the "
                 "process and host faults "
                 "(default: any but the management interface)");
  app.add_option("--allow-kinds", allow_kinds,
                 "the only fault kinds this node accepts (default: every kind); no controller "
                 "can widen it");
  app.add_option("--deny-kinds", deny_kinds, "fault kinds this node never accepts");
  app.add_option("--deny", deny,
                 "targets no fault may touch (interfaces, IB ports as mlx5_0/1, gpu0, ...)");
  app.add_option("--revoked", revoked,
                 "revoked certificate serials, one hex per line (`fdrill certs revoke`); "
                 "default: revoked.txt beside --tls-ca, when there");
  app.add_flag("--revert-all", revert_all, "revert everything the journal holds, then exit")
      ->configurable(false);  // a one-shot, never a daemon's setting
  app.add_option("--tls-ca", tls.ca_file,
                 "CA certificate (PEM) that signed the controller's certificate");
  app.add_option("--tls-cert", tls.cert_file, "this agent's certificate (PEM)");
  app.add_option("--tls-key", tls.key_file, "this agent's private key (PEM)");
  app.add_flag("--insecure", insecure,
               "serve plaintext TCP with no client authentication (tests, trusted labs)");
  app.add_flag("--fake-host", fake_host,
               "no-op host backend: real wire, TLS, journal and lease; faults are recorded, "
               "never applied (benchmarks, trying drills without root)");
  app.add_option("--fake-agents", fake_agents,
                 "with --fake-host: serve this many fake agents from one process, "
                 "nodes f0.. on consecutive 127.x.y.z addresses from --listen's, each its own "
                 "listener and lease");
  app.add_option("--fake-first-index", fake_first_index,
                 "with --fake-agents: this process serves agents "
                 "I.. (node fI on --listen's address + I): one fleet split over processes, each "
                 "within its fd limit");
  app.add_option("--fake-ca", fake_ca,
                 "with --fake-agents: directory with ca.pem and ca.key (`fdrill certs init`); "
                 "each fake agent gets a certificate for its node name");
  app.add_option("--telemetry-interval", telemetry_interval,
                 "how often counters (netdev, IB port, NVLink) are "
                 "sampled and pushed while a workload runs: 100ms .. 1h")
      ->capture_default_str();
  app.add_option("--metrics-listen", metrics_listen,
                 "also serve Prometheus text format on http://ADDR:PORT/metrics "
                 "(plaintext, read-only; off unless given; 9477 is the suggested port)");
  app.add_option("--log-level", log_level, "debug|info|warn|error")->capture_default_str();
  app.set_version_flag("--version", std::string("fdrill-agent ") + kFdrillVersion);
  auto* config_file = app.set_config("--config", "",
                                     "settings file: `long-flag-name = value` lines (TOML); "
                                     "flags given here win");
  app.allow_config_extras(CLI::config_extras_mode::error);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11's messages do not say where a setting came from: name the file.
    std::string file = config_file->count() > 0 ? config_file->as<std::string>() : "";
    bool in_file = dynamic_cast<const CLI::ConfigError*>(&e) != nullptr ||
                   dynamic_cast<const CLI::FileError*>(&e) != nullptr;
    if (in_file) {
      std::fprintf(stderr, "fdrill-agent: --config %s: %s\n", file.c_str(), e.what());
    } else if (!file.empty()) {
      std::fprintf(stderr, "fdrill-agent: %s (flags and --config %s)\n", e.what(), file.c_str());
    } else {
      std::fprintf(stderr, "fdrill-agent: %s\n", e.what());
    }
    return 2;
  }
  InitLogging("fdrill-agent", log_level);
  auto telemetry_every = ParseTelemetryInterval(telemetry_interval);
  if (!telemetry_every.ok()) {
    spdlog::error("{}", telemetry_every.status().message());
    return 2;
  }
  if (fake_host && revert_all) {
    // A fake host reverts nothing real: it must never consume a real journal.
    spdlog::error("--fake-host and --revert-all exclude each other");
    return 2;
  }
  if (fake_agents > 0) {
    if (!fake_host) {
      spdlog::error("--fake-agents needs --fake-host (and serves; --revert-all does not apply)");
      return 2;
    }
    if (insecure == !fake_ca.empty()) {
      spdlog::error(
          "--fake-agents: give --fake-ca DIR (mutual TLS, a certificate per agent) or --insecure");
      return 2;
    }
    auto colon = listen.rfind(':');
    FakeFleetConfig fleet;
    fleet.agents = fake_agents;
    fleet.first_index = fake_first_index;
    fleet.first_address = listen.substr(0, colon);
    fleet.port = static_cast<uint16_t>(std::atoi(listen.c_str() + colon + 1));
    fleet.state_dir = state_dir;
    fleet.ca_dir = fake_ca;
    fleet.allowlist = {allow.begin(), allow.end()};
    if (!node.empty()) fleet.node_prefix = node;
    return RunFakeFleet(fleet);
  }
  if (!revert_all) {
    bool any_tls = !tls.ca_file.empty() || !tls.cert_file.empty() || !tls.key_file.empty();
    bool all_tls = !tls.ca_file.empty() && !tls.cert_file.empty() && !tls.key_file.empty();
    if (insecure && any_tls) {
      spdlog::error(
          "--insecure and --tls-* exclude each other: give the three --tls-* files or --insecure");
      return 2;
    }
    if (!insecure && !all_tls) {
      spdlog::error(
          "{}: to serve, give --tls-ca, --tls-cert and --tls-key (mutual TLS; see `fdrill certs`), "
          "or --insecure for plaintext",
          any_tls ? "incomplete TLS settings" : "no TLS settings");
      return 2;
    }
  }

  std::error_code ec;
  std::filesystem::create_directories(fake_host ? state_dir + "/fake-host" : state_dir, ec);
  if (ec) {
    spdlog::error("--state-dir {}: {}", state_dir, ec.message());
    return 2;
  }
  RealProcessRunner runner;
  RealSysFs sysfs;
  RealProcessTable procs;
  RealClock clock;
  Host host{&runner, &sysfs, &procs};
  host.gpus = &NvmlAt(NvmlLibraryPath());  // opened on first use; a GPU-less node says why then
  RealTcpSockets tcp_sockets;
  host.tcp_sockets = &tcp_sockets;
  RealVerbs verbs;  // nothing is opened until an ib_watch asks
  host.verbs = &verbs;
  NetlinkNetStack net;  // links, qdiscs, counters in-process; tc/ip only in plans
  host.net = &net;
  FakeHost fake;
  if (fake_host) host = fake.host();

  auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    spdlog::error("--listen {}: expected ADDRESS:PORT", listen);
    return 2;
  }
  std::string listen_host = listen.substr(0, colon);
  int port = std::atoi(listen.c_str() + colon + 1);
  if (port <= 0 || port > 65535) {
    spdlog::error("--listen {}: bad port", listen);
    return 2;
  }

  AgentConfig config;
  config.node = node;
  if (config.node.empty()) {
    char h[256] = {0};
    gethostname(h, sizeof(h) - 1);
    config.node = h;
  }
  // A fake agent keeps its journal apart, so it never sweeps a real one.
  config.state_dir = fake_host ? state_dir + "/fake-host" : state_dir;
  config.allowlist = {allow.begin(), allow.end()};
  for (const auto* kinds : {&allow_kinds, &deny_kinds}) {
    for (const std::string& kind : *kinds) {
      if (FindInjector(kind) == nullptr) {
        spdlog::error("{} {}: not a fault kind (`fdrill injectors` lists them)",
                      kinds == &allow_kinds ? "--allow-kinds" : "--deny-kinds", kind);
        return 2;
      }
    }
  }
  config.allow_kinds = {allow_kinds.begin(), allow_kinds.end()};
  config.deny_kinds = {deny_kinds.begin(), deny_kinds.end()};
  config.deny_targets = {deny.begin(), deny.end()};
  config.listen_address = listen_host;
  config.revoked_file = revoked;
  if (revoked.empty() && !tls.ca_file.empty())
    config.revoked_file =
        (std::filesystem::path(tls.ca_file).parent_path() / kRevokedFile).string();
  config.telemetry_interval = *telemetry_every;
  if (const char* t = std::getenv("TMPDIR")) config.tmpdir = t;
  host.launch_env_dir = LaunchEnvDir(config.tmpdir);
  if (fake_host) {
    config.mgmt_interface = "mgmt0";  // the fake machine's (agents/fake_host.h)
  } else if (!revert_all) {
    auto mgmt = InterfaceOwningAddress(runner, listen_host);
    if (!mgmt.ok()) {
      spdlog::error("--listen {}: {}", listen, mgmt.status().message());
      return 2;
    }
    config.mgmt_interface = *mgmt;
  }

  AgentService service(config, host, clock);
  auto swept = service.SweepAtStart();
  if (!swept.ok()) {
    spdlog::error("journal sweep: {}", swept.status().ToString());
    return 2;
  }
  if (*swept > 0) spdlog::warn("start-up sweep reverted {} fault(s) from the journal", *swept);
  if (revert_all) {
    std::printf("fdrill-agent: reverted %d fault(s); nothing of fdrill's remains applied\n",
                *swept);
    if (!service.journal_error().empty()) {
      // Reverted all the same: the next start reverts them again, harmlessly.
      std::printf("fdrill-agent: the journal could not record it (%s): free the state directory\n",
                  service.journal_error().c_str());
    }
    return 0;
  }
  if (!service.journal_error().empty())
    spdlog::error("serving with faults refused until the journal can be written: {}",
                  service.journal_error());

  std::unique_ptr<boost::asio::ssl::context> ssl;
  if (!insecure) {
    auto ctx = MakeServerContext(tls);
    if (!ctx.ok()) {
      spdlog::error("{}", ctx.status().message());
      return 2;
    }
    ssl = std::move(ctx).value();
  }
  boost::asio::io_context io;
  AgentServer server(io, service, ssl.get());
  if (auto s = server.Listen(listen_host, static_cast<uint16_t>(port)); !s.ok()) {
    spdlog::error("{}", s.message());
    return 2;
  }
  std::unique_ptr<MetricsEndpoint> metrics;
  if (!metrics_listen.empty()) {
    auto addr = ParseListenAddress(metrics_listen, "--metrics-listen");
    if (!addr.ok()) {
      spdlog::error("{}", addr.status().message());
      return 2;
    }
    metrics = std::make_unique<MetricsEndpoint>(io, service, clock, config.node, kFdrillVersion);
    if (auto s = metrics->Listen(addr->first, addr->second); !s.ok()) {
      spdlog::error("{}", s.message());
      return 2;
    }
    metrics->Start();
    spdlog::info("Prometheus metrics on http://{}/metrics", metrics_listen);
  }
  boost::asio::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
  signals.async_wait([&](const boost::system::error_code&, int sig) {
    spdlog::info("signal {}: reverting and exiting", sig);
    service.RevertEverything("agent shutting down");
    server.StopAccepting();
    if (metrics) metrics->Stop();
    io.stop();
  });
  server.Start();
  spdlog::info("node {} serving on {} ({}; management interface {}, state {}){}", config.node,
               listen, insecure ? "PLAINTEXT, --insecure" : "mutual TLS, CA " + tls.ca_file,
               config.mgmt_interface.empty() ? "-" : config.mgmt_interface, config.state_dir,
               fake_host ? "; FAKE HOST: faults are recorded, not applied" : "");
  // A handler that throws ends io.run(): as a failed tick (server.h), the
  // agent reverts, says why, and exits for its supervisor to restart it.
  try {
    io.run();
  } catch (const std::exception& e) {
    spdlog::critical("the agent failed: {}; reverting and exiting", e.what());
    service.RevertEverything("the agent failed");
    return kTimerFailedExit;
  }
  return 0;
}

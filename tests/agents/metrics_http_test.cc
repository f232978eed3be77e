// The agent's metrics over HTTP: MetricsHttpServer over a real socket
// (GET and HEAD /metrics, other paths and methods, keep-alive, oversize,
// garbage and idle clients), --metrics-listen's address, and the endpoint
// (MetricsEndpoint): one sample of the agent's state and counters feeds
// /metrics and the counters push. The text is held to the strict checker of
// tests/agents/exposition_checker.h.
#include "agents/metrics_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "agents/metrics_endpoint.h"
#include "agents/prometheus.h"
#include "tests/agents/exposition_checker.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_host.h"

namespace fdrill {
namespace {

using agents_test::BusySnapshot;
using agents_test::CheckExposition;

// ---- the HTTP server -------------------------------------------------------------

// One request on a fresh connection; returns everything the server sent
// until it closed ("" when it closed without answering).
std::string Exchange(uint16_t port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "connect failed";
  }
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;)
    reply.append(buf, static_cast<size_t>(n));
  close(fd);
  return reply;
}

std::string Body(const std::string& reply) {
  size_t p = reply.find("\r\n\r\n");
  return p == std::string::npos ? "" : reply.substr(p + 4);
}

class MetricsHttpTest : public ::testing::Test {
 protected:
  void StartServer() {
    ASSERT_TRUE(server_.Listen("127.0.0.1", 0).ok());
    server_.set_timeout(std::chrono::milliseconds(300));
    server_.Start();
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    io_.stop();
    if (thread_.joinable()) thread_.join();
    server_.Stop();
  }
  boost::asio::io_context io_;
  int renders_ = 0;
  MetricsHttpServer server_{io_, [this] {
                              ++renders_;
                              return RenderPrometheus(BusySnapshot());
                            }};
  std::thread thread_;
};

TEST_F(MetricsHttpTest, GetMetricsOverAPlainSocket) {
  StartServer();
  std::string reply =
      Exchange(server_.port(), "GET /metrics HTTP/1.1\r\nHost: n1\r\nConnection: close\r\n\r\n");
  ASSERT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos)
      << reply;
  const std::string body = Body(reply);
  EXPECT_EQ(body, RenderPrometheus(BusySnapshot()));
  EXPECT_TRUE(CheckExposition(body, {.require_help_and_type = true}).empty());
  EXPECT_NE(reply.find("Content-Length: " + std::to_string(body.size()) + "\r\n"),
            std::string::npos);
}

TEST_F(MetricsHttpTest, HeadOtherPathsAndMethods) {
  StartServer();
  std::string head =
      Exchange(server_.port(), "HEAD /metrics HTTP/1.1\r\nHost: n1\r\nConnection: close\r\n\r\n");
  ASSERT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
  EXPECT_EQ(Body(head), "");
  EXPECT_NE(head.find("Content-Length: " + std::to_string(RenderPrometheus(BusySnapshot()).size())),
            std::string::npos);
  std::string root =
      Exchange(server_.port(), "GET / HTTP/1.1\r\nHost: n1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(root.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << root;
  std::string post = Exchange(
      server_.port(),
      "POST /metrics HTTP/1.1\r\nHost: n1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(post.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0), 0u) << post;
  EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos);
  EXPECT_EQ(renders_, 1) << "only GET/HEAD /metrics renders";
}

TEST_F(MetricsHttpTest, KeepAliveServesTwoRequestsOnOneConnection) {
  StartServer();
  std::string reply = Exchange(server_.port(),
                               "GET /metrics HTTP/1.1\r\nHost: n1\r\n\r\n"
                               "GET /metrics HTTP/1.1\r\nHost: n1\r\nConnection: close\r\n\r\n");
  size_t first = reply.find("HTTP/1.1 200 OK");
  ASSERT_NE(first, std::string::npos);
  EXPECT_NE(reply.find("HTTP/1.1 200 OK", first + 1), std::string::npos);
}

TEST_F(MetricsHttpTest, OversizeRequestsGarbageAndIdleClientsAreClosed) {
  StartServer();
  std::string huge = "GET /metrics HTTP/1.1\r\nHost: n1\r\nX-Pad: " +
                     std::string(MetricsHttpServer::kMaxHeaderBytes * 2, 'a') + "\r\n\r\n";
  EXPECT_EQ(Exchange(server_.port(), huge).find("200 OK"), std::string::npos);
  EXPECT_EQ(Exchange(server_.port(), "\x16\x03\x01 not http\r\n\r\n"), "");
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Exchange(server_.port(), ""), "");  // says nothing: closed at the timeout
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
  // And it still serves.
  std::string ok = Exchange(server_.port(), "GET /metrics HTTP/1.0\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << ok;
}

TEST(MetricsListenTest, ParsesAddressAndPort) {
  auto a = ParseListenAddress("127.0.0.1:9477", "--metrics-listen");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first, "127.0.0.1");
  EXPECT_EQ(a->second, 9477);
  auto v6 = ParseListenAddress("[::1]:9477", "--metrics-listen");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->first, "::1");
  for (const char* bad : {"9477", "host:9477", "127.0.0.1:", "127.0.0.1:70000", "127.0.0.1:94x"}) {
    auto r = ParseListenAddress(bad, "--metrics-listen");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message().rfind("--metrics-listen ", 0), 0u);
  }
}

// ---- the endpoint: the agent's state, sampled counters ---------------------------

constexpr char kProcNetDev[] =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop "
    "fifo colls carrier "
    "compressed\n"
    " mgmt0:    5000      50    0    0    0     0          0         0     6000      60    0    0  "
    "  0     0       0"
    "          0\n"
    "  fab0:    1234      10    0    2    0     0          0         0     4321      20    0    1  "
    "  0     0       0"
    "          0\n";

// One sample feeds /metrics and the counters push: the endpoint shows what
// the service sampled, and an idle service samples only while an endpoint
// is serving.
TEST(MetricsEndpointTest, SamplesCountersWithoutAWorkloadAndReportsAge) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("fdrill-metrics-endpoint-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  FakeProcessRunner runner;
  runner.OnOutput({"tc", "-s", "-j", "qdisc", "show"}, "[]");
  FakeSysFs sysfs;
  sysfs.files["/proc/net/dev"] = kProcNetDev;
  FakeClock clock;
  AgentConfig config;
  config.node = "n1";
  config.state_dir = dir.string();
  config.mgmt_interface = "mgmt0";
  AgentService service(config, Host{&runner, &sysfs}, clock);
  boost::asio::io_context io;
  MetricsEndpoint endpoint(io, service, clock, "n1", "0.1.0");
  clock.Advance(std::chrono::seconds(5));
  service.Tick();  // idle, no endpoint serving: nothing sampled
  EXPECT_FALSE(service.telemetry_sampled_at().has_value());
  EXPECT_FALSE(endpoint.Snapshot().sample_age_s.has_value());
  endpoint.Start();
  service.Tick();
  ASSERT_TRUE(service.telemetry_sampled_at().has_value());
  service.Tick();  // within the interval: the same sample
  EXPECT_EQ(runner.calls().size(), 1u) << "one qdisc read per interval";
  clock.Advance(std::chrono::seconds(3));
  AgentMetricsSnapshot s = endpoint.Snapshot();
  EXPECT_EQ(s.counters.value("fab0.rx_bytes", -1), 1234);
  EXPECT_FALSE(s.counters.contains("mgmt0.rx_bytes"));
  ASSERT_TRUE(s.sample_age_s.has_value());
  EXPECT_DOUBLE_EQ(*s.sample_age_s, 3.0);
  EXPECT_FALSE(s.lease_active);
  EXPECT_FALSE(s.workload_running);
  ASSERT_TRUE(s.faults_active.count("link_rate"));
  EXPECT_EQ(s.faults_active["link_rate"], 0);
  const std::string text = RenderPrometheus(s);
  EXPECT_TRUE(CheckExposition(text, {.require_help_and_type = true}).empty()) << text;
  EXPECT_NE(text.find("fdrill_netdev_rx_dropped_total{node=\"n1\",interface=\"fab0\"} 2\n"),
            std::string::npos)
      << text;
  endpoint.Stop();
  io.run_for(std::chrono::milliseconds(50));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdrill

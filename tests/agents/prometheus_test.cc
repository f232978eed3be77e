// The agent's Prometheus endpoint: the renderer against a strict checker of
// the text exposition format 0.0.4 written here from the spec
// (prometheus.io/docs/instrumenting/exposition_formats, "Text format
// details"), which must itself reject broken inputs; promtool as a second
// opinion when it is installed; and the HTTP server over a real socket.
#include "agents/prometheus.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "agents/metrics_endpoint.h"
#include "agents/metrics_http.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_host.h"

extern char** environ;

namespace fdrill {
namespace {

// ---- a strict 0.0.4 checker -------------------------------------------------

bool IsMetricName(const std::string& s) {
  return std::regex_match(s, std::regex("[a-zA-Z_:][a-zA-Z0-9_:]*"));
}

// Go's strconv.ParseFloat as Prometheus uses it, minus hex and underscores.
bool IsValue(const std::string& s) {
  static const std::regex kFloat(R"([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)");
  static const std::set<std::string> kSpecial = {"NaN", "+Inf", "-Inf", "Inf"};
  return kSpecial.count(s) > 0 || std::regex_match(s, kFloat);
}

struct CheckOptions {
  bool require_help_and_type = false;  // fdrill's own rule for its output
};

// Returns the problems found, "line N: why"; empty when the text is valid.
std::vector<std::string> CheckExposition(const std::string& text, CheckOptions opt = {}) {
  std::vector<std::string> bad;
  if (!text.empty() && text.back() != '\n')
    bad.push_back("the last line does not end with a newline");
  std::map<std::string, std::string> type_of;
  std::set<std::string> helped, sampled, closed, series;
  std::string current;  // the family whose samples are being read
  std::istringstream in(text);
  int n = 0;
  auto family_of = [&](const std::string& name) {
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      std::string sfx(suffix);
      if (name.size() > sfx.size() &&
          name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0) {
        std::string base = name.substr(0, name.size() - sfx.size());
        auto t = type_of.find(base);
        if (t != type_of.end() && (t->second == "histogram" || t->second == "summary")) return base;
      }
    }
    return name;
  };
  for (std::string line; std::getline(in, line);) {
    ++n;
    const std::string at = "line " + std::to_string(n) + ": ";
    if (line.find('\r') != std::string::npos) bad.push_back(at + "carriage return");
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    line = line.substr(b);
    if (line[0] == '#') {
      std::istringstream t(line.substr(1));
      std::string kw, name;
      t >> kw;
      if (kw != "HELP" && kw != "TYPE") continue;  // any other comment is ignored
      if (!(t >> name) || !IsMetricName(name)) {
        bad.push_back(at + kw + " without a valid metric name");
        continue;
      }
      if (!current.empty() && current != name) closed.insert(current);
      if (closed.count(name) > 0) bad.push_back(at + name + ": metadata after its samples ended");
      if (kw == "HELP") {
        if (!helped.insert(name).second) bad.push_back(at + "second HELP for " + name);
        std::string doc;
        std::getline(t, doc);
        for (size_t i = 0; i < doc.size(); ++i) {
          if (doc[i] == '\\' &&
              (i + 1 == doc.size() || (doc[i + 1] != '\\' && doc[i + 1] != 'n'))) {
            bad.push_back(at + "HELP escapes only \\\\ and \\n");
          }
          if (doc[i] == '\\') ++i;
        }
      } else {
        std::string type, extra;
        t >> type;
        static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary",
                                                     "untyped"};
        if (kTypes.count(type) == 0 || (t >> extra))
          bad.push_back(at + "TYPE needs one of the five types");
        if (type_of.count(name) > 0) bad.push_back(at + "second TYPE for " + name);
        if (sampled.count(name) > 0) bad.push_back(at + "TYPE for " + name + " after its samples");
        type_of[name] = type;
      }
      current = name;
      continue;
    }
    // name [ "{" labels "}" ] value [ timestamp ]
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ' && line[i] != '\t') ++i;
    const std::string name = line.substr(0, i);
    if (!IsMetricName(name)) {
      bad.push_back(at + "bad metric name '" + name + "'");
      continue;
    }
    std::map<std::string, std::string> labels;
    bool ok = true;
    if (i < line.size() && line[i] == '{') {
      ++i;
      for (;;) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        if (i < line.size() && line[i] == '}') {
          ++i;
          break;
        }
        size_t s = i;
        while (i < line.size() && (isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_'))
          ++i;
        std::string lname = line.substr(s, i - s);
        if (!std::regex_match(lname, std::regex("[a-zA-Z_][a-zA-Z0-9_]*")) ||
            lname.rfind("__", 0) == 0) {
          bad.push_back(at + "bad or reserved label name '" + lname + "'");
          ok = false;
          break;
        }
        if (i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') {
          bad.push_back(at + "label " + lname + " needs =\"value\"");
          ok = false;
          break;
        }
        i += 2;
        std::string value;
        bool closed_quote = false;
        while (i < line.size()) {
          char c = line[i++];
          if (c == '"') {
            closed_quote = true;
            break;
          }
          if (c == '\\') {
            if (i >= line.size() || (line[i] != '\\' && line[i] != '"' && line[i] != 'n')) {
              bad.push_back(at + "label value escapes only \\\\, \\\" and \\n");
              ok = false;
              break;
            }
            value += line[i++];
            continue;
          }
          value += c;
        }
        if (!ok) break;
        if (!closed_quote) {
          bad.push_back(at + "unterminated label value");
          ok = false;
          break;
        }
        if (!labels.emplace(lname, value).second) {
          bad.push_back(at + "label " + lname + " twice");
          ok = false;
          break;
        }
        if (i < line.size() && line[i] == ',') {
          ++i;
          continue;
        }
        if (i < line.size() && line[i] == '}') {
          ++i;
          break;
        }
        bad.push_back(at + "expected , or } after a label");
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    std::istringstream rest(line.substr(i));
    std::string value, ts, extra;
    if (i < line.size() && line[i] != ' ' && line[i] != '\t') {
      bad.push_back(at + "no whitespace before the value");
      continue;
    }
    if (!(rest >> value) || !IsValue(value)) {
      bad.push_back(at + "bad value '" + value + "'");
      continue;
    }
    if (rest >> ts && !std::regex_match(ts, std::regex("-?\\d+")))
      bad.push_back(at + "timestamp must be integer ms");
    if (rest >> extra) bad.push_back(at + "trailing '" + extra + "'");
    const std::string family = family_of(name);
    if (!current.empty() && current != family) closed.insert(current);
    if (closed.count(family) > 0) bad.push_back(at + family + ": samples not contiguous");
    current = family;
    sampled.insert(family);
    if (opt.require_help_and_type && (type_of.count(family) == 0 || helped.count(family) == 0)) {
      bad.push_back(at + family + " without HELP and TYPE before it");
    }
    std::string key = name + "{";
    for (const auto& [k, v] : labels) key += k + "=" + v + "\x01";
    if (!series.insert(key).second) bad.push_back(at + "duplicate series " + name);
  }
  return bad;
}

TEST(PrometheusCheckerTest, AcceptsTheSpecsKindOfInput) {
  const std::string good =
      "# HELP http_requests_total The total number of HTTP requests.\n"
      "# TYPE http_requests_total counter\n"
      "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
      "http_requests_total{method=\"post\",code=\"400\",}    3 1395066363000\n"
      "\n"
      "# Escaping in label values:\n"
      "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find "
      "file:\\n\\\"FILE.TXT\\\"\"} "
      "1.458255915e9\n"
      "metric_without_timestamp_and_labels 12.47\n"
      "something_weird{problem=\"division by zero\"} +Inf -3982045\n"
      "# HELP rpc_duration_seconds A summary of the RPC duration in seconds.\n"
      "# TYPE rpc_duration_seconds summary\n"
      "rpc_duration_seconds{quantile=\"0.5\"} 4773\n"
      "rpc_duration_seconds_sum 1.7560473e+07\n"
      "rpc_duration_seconds_count 2693\n"
      "nan_gauge NaN\n";
  auto problems = CheckExposition(good);
  EXPECT_TRUE(problems.empty()) << problems[0];
}

TEST(PrometheusCheckerTest, RejectsBrokenInputs) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"m 1", "no final newline"},
      {"1m 1\n", "name starts with a digit"},
      {"m-x 1\n", "dash in a name"},
      {"m{a=\"x\\q\"} 1\n", "unknown escape"},
      {"m{a=\"x} 1\n", "unterminated value"},
      {"m{__a=\"x\"} 1\n", "reserved label name"},
      {"m{a=\"1\",a=\"2\"} 1\n", "label twice"},
      {"m{a=1} 1\n", "unquoted value"},
      {"m 1\nm 2\n", "duplicate series"},
      {"m{a=\"1\"} 1\nm{a=\"1\",} 2\n", "duplicate series, trailing comma"},
      {"# TYPE m counter\n# TYPE m counter\nm 1\n", "two TYPE lines"},
      {"m 1\n# TYPE m counter\n", "TYPE after samples"},
      {"# TYPE m countr\nm 1\n", "unknown type"},
      {"# HELP m a\\b\nm 1\n", "bad HELP escape"},
      {"a{x=\"1\"} 1\nb 1\na{x=\"2\"} 1\n", "family not contiguous"},
      {"m one\n", "value not a number"},
      {"m 1 1.5\n", "fractional timestamp"},
      {"m 1 2 3\n", "trailing token"},
      {"m{a=\"1\"}1\n", "no whitespace before the value"},
      {"m 1\r\n", "CRLF"},
  };
  for (const auto& [text, why] : cases) EXPECT_FALSE(CheckExposition(text).empty()) << why;
  EXPECT_FALSE(CheckExposition("m 1\n", {.require_help_and_type = true}).empty())
      << "fdrill requires HELP/TYPE";
}

// ---- the renderer --------------------------------------------------------------

AgentMetricsSnapshot BusySnapshot() {
  AgentMetricsSnapshot s;
  s.node = "n\"1\\\n";  // every character the format escapes
  s.version = "0.1.0";
  s.faults_active = {{"link_rate", 2}, {"ib_port_flap", 0}};
  s.lease_active = true;
  s.workload_running = true;
  s.sample_age_s = 0.25;
  s.counters = {
      {"fab0.rx_bytes", 18446744073709551615ull},  // 2^64-1: must print exactly
      {"fab0.qdisc_drops", 7},
      {"tcp.retrans_segs", 324},
      {"eth0.100.tx_packets", 3},  // a VLAN: splits at the last dot
      {"ib/mlx5_0/1.symbol_error", 4},
      {"ib/mlx5_0/1.link_downed_total", 1},  // already _total: not doubled
      {"ib/mlx5_1/2.port_rcv_errors", 0},
      {"gpu0/nvlink3.crc_errors", 5},
      {"gpu1/nvlink0.crc_errors", 6},
      {"gpu1/nvlink0.replay-errors", 2},  // sanitised
      {"fab0.rx-bytes", 99},              // sanitises onto fab0.rx_bytes: dropped
      {"weird/shape", 8},
      {"nvlink_total", 1.5},
      {"fab1.note", "not a number"},
  };
  return s;
}

TEST(PrometheusTest, RenderPassesTheStrictChecker) {
  const std::string text = RenderPrometheus(BusySnapshot());
  auto problems = CheckExposition(text, {.require_help_and_type = true});
  EXPECT_TRUE(problems.empty()) << problems[0] << "\n" << text;
  // Every counter family ends in _total.
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) == 0 && line.size() > 8 &&
        line.substr(line.size() - 8) == " counter") {
      std::string name = line.substr(7, line.size() - 15);
      EXPECT_EQ(name.substr(name.size() - 6), "_total") << line;
    }
  }
}

TEST(PrometheusTest, CounterKeysMapToFamiliesAndLabels) {
  const std::string text = RenderPrometheus(BusySnapshot());
  const std::string node = "node=\"n\\\"1\\\\\\n\"";
  auto has = [&](const std::string& line) { return text.find(line + "\n") != std::string::npos; };
  EXPECT_TRUE(has("fdrill_agent_info{" + node + ",version=\"0.1.0\"} 1")) << text;
  EXPECT_TRUE(has("fdrill_faults_active{" + node + ",kind=\"link_rate\"} 2"));
  EXPECT_TRUE(has("fdrill_faults_active{" + node + ",kind=\"ib_port_flap\"} 0"));
  EXPECT_TRUE(has("fdrill_lease_active{" + node + "} 1"));
  EXPECT_TRUE(has("fdrill_workload_running{" + node + "} 1"));
  EXPECT_TRUE(has("fdrill_counters_sample_age_seconds{" + node + "} 0.25"));
  EXPECT_TRUE(
      has("fdrill_netdev_rx_bytes_total{" + node + ",interface=\"fab0\"} 18446744073709551615"));
  EXPECT_TRUE(has("fdrill_netdev_qdisc_drops_total{" + node + ",interface=\"fab0\"} 7"));
  EXPECT_TRUE(has("fdrill_netdev_tx_packets_total{" + node + ",interface=\"eth0.100\"} 3"));
  // The node's transport counters are the node's, not an interface's.
  EXPECT_TRUE(has("fdrill_tcp_retrans_segs_total{" + node + "} 324")) << text;
  EXPECT_EQ(text.find("interface=\"tcp\""), std::string::npos);
  EXPECT_TRUE(
      has("fdrill_ib_port_symbol_error_total{" + node + ",device=\"mlx5_0\",port=\"1\"} 4"));
  EXPECT_TRUE(has("fdrill_ib_port_link_downed_total{" + node + ",device=\"mlx5_0\",port=\"1\"} 1"));
  EXPECT_TRUE(
      has("fdrill_ib_port_port_rcv_errors_total{" + node + ",device=\"mlx5_1\",port=\"2\"} 0"));
  EXPECT_TRUE(has("fdrill_nvlink_crc_errors_total{" + node + ",gpu=\"0\",link=\"3\"} 5"));
  EXPECT_TRUE(has("fdrill_nvlink_crc_errors_total{" + node + ",gpu=\"1\",link=\"0\"} 6"));
  EXPECT_TRUE(has("fdrill_nvlink_replay_errors_total{" + node + ",gpu=\"1\",link=\"0\"} 2"));
  EXPECT_TRUE(has("fdrill_misc_total{" + node + ",name=\"weird/shape\"} 8"));
  EXPECT_TRUE(has("fdrill_misc_total{" + node + ",name=\"nvlink_total\"} 1.5"));
  EXPECT_EQ(text.find(" 99\n"), std::string::npos) << "the colliding key must be dropped";
  EXPECT_EQ(text.find("note"), std::string::npos) << "a non-number is skipped";
}

TEST(PrometheusTest, IdleAgentBeforeAnySample) {
  AgentMetricsSnapshot s;
  s.node = "n0";
  s.version = "0.1.0";
  const std::string text = RenderPrometheus(s);
  EXPECT_TRUE(CheckExposition(text, {.require_help_and_type = true}).empty()) << text;
  EXPECT_NE(text.find("fdrill_lease_active{node=\"n0\"} 0\n"), std::string::npos);
  EXPECT_EQ(text.find("fdrill_counters_sample_age_seconds{"), std::string::npos);
}

// promtool (Debian package `prometheus`) parses and lints with Prometheus's
// own code; stdin only, so it is spawned with the file as its stdin.
std::string FindPromtool() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string p = dir + "/promtool";
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

TEST(PrometheusTest, PromtoolCheckMetricsWhenInstalled) {
  const std::string promtool = FindPromtool();
  if (promtool.empty()) {
    GTEST_SKIP() << "promtool not installed (Debian package `prometheus`); only the checker above "
                    "judged the output";
  }
  const auto dir = std::filesystem::temp_directory_path();
  const std::string in = (dir / ("fdrill-prom-" + std::to_string(getpid()) + ".txt")).string();
  const std::string out = in + ".out";
  std::ofstream(in) << RenderPrometheus(BusySnapshot());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, in.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<std::string> args = {promtool, "check", "metrics"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, promtool.c_str(), &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  std::stringstream said;
  said << std::ifstream(out).rdbuf();
  std::filesystem::remove(in);
  std::filesystem::remove(out);
  // 0: clean; 1: parse error; 3: lint problems (no HELP, counter without _total, ...).
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "promtool check metrics: " << said.str();
}

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

// The agent's Prometheus renderer against a strict checker of the text
// exposition format 0.0.4 (tests/agents/exposition_checker.h), which must
// itself reject broken inputs, and promtool as a second opinion when it is
// installed. The HTTP server and the endpoint are in metrics_http_test.cc.
#include "agents/prometheus.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/agents/exposition_checker.h"

extern char** environ;

namespace fdrill {
namespace {

using agents_test::BusySnapshot;
using agents_test::CheckExposition;

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

}  // namespace
}  // namespace fdrill

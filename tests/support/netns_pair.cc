#include "tests/support/netns_pair.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>
#include <sstream>

#include <gtest/gtest.h>

namespace fdrill {

Result<ProcessResult> NamespaceRunner::Run(const std::vector<std::string>& argv, Duration timeout) {
  if (argv.empty()) return InvalidArgument("empty argv");
  if (hidden_.count(argv[0]) != 0) return ProgramMissing(argv[0]);
  // The namespace shares this process's file system: the lookup here is the
  // one `ip netns exec` would make.
  if (auto path = FindInPath(argv[0]); !path.ok()) return path.status();
  std::vector<std::string> wrapped = {"ip", "netns", "exec", ns_};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return real_.Run(wrapped, timeout);
}

bool NamespaceRunner::Has(const std::string& program) const {
  return hidden_.count(program) == 0 && FindInPath(program).ok();
}

Result<std::string> NamespaceSysFs::Read(const std::string& path) {
  auto r = runner_->Run({"cat", path}, std::chrono::seconds(5));
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) return NotFound("cannot read " + path + ": " + r->err);
  return r->out;
}

bool NamespaceSysFs::Exists(const std::string& path) {
  auto r = runner_->Run({"test", "-e", path}, std::chrono::seconds(5));
  return r.ok() && r->exit_code == 0;
}

Status NetnsPair::Create(const std::string& prefix) {
  a_ = prefix + "-" + std::to_string(getpid()) + "a";
  b_ = prefix + "-" + std::to_string(getpid()) + "b";
  RemoveNamespaces();  // a crashed earlier run with this pid
  const std::vector<std::vector<std::string>> steps = {
      {"ip", "netns", "add", a_},
      {"ip", "netns", "add", b_},
      {"ip", "-n", a_, "link", "add", "fab0", "type", "veth", "peer", "name", "fab0", "netns", b_},
      {"ip", "-n", a_, "addr", "add", std::string(kAddressA) + "/24", "dev", "fab0"},
      {"ip", "-n", b_, "addr", "add", std::string(kAddressB) + "/24", "dev", "fab0"},
      {"ip", "-n", a_, "link", "set", "fab0", "up"},
      {"ip", "-n", b_, "link", "set", "fab0", "up"},
      {"ip", "-n", a_, "link", "set", "lo", "up"},
      {"ip", "-n", b_, "link", "set", "lo", "up"}};
  for (const auto& argv : steps) {
    if (auto r = RunChecked(real_, argv); !r.ok()) return r.status();
  }
  return Status::Ok();
}

void NetnsPair::RemoveNamespaces() {
  for (const std::string* ns : {&a_, &b_}) {
    if (!ns->empty()) (void)real_.Run({"ip", "netns", "del", *ns}, std::chrono::seconds(10));
  }
}

void NetnsPair::Delete() {
  RemoveNamespaces();
  a_.clear();
  b_.clear();
}

bool EnterNamespace(const std::string& ns) {
  int nsfd = open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
  if (nsfd < 0) return false;
  bool entered = setns(nsfd, CLONE_NEWNET) == 0;
  close(nsfd);
  return entered;
}

int SocketIn(const std::string& ns, bool nonblocking) {
  int fd = -1;
  std::thread t([&] {
    if (EnterNamespace(ns))
      fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  });
  t.join();
  return fd;
}

sockaddr_in Ipv4Address(const char* ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

std::string RulesetWithoutCounters(ProcessRunner& runner) {
  auto out = RunChecked(runner, {"iptables-save"});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return "";
  std::string text = std::regex_replace(*out, std::regex("^#.*\n", std::regex::multiline), "");
  return std::regex_replace(text, std::regex("\\[[0-9]+:[0-9]+\\]"), "[]");
}

void ExpectRulesetRestored(const NamespaceRunner& runner, const std::string& before,
                           const std::string& after) {
  if (runner.Has("nft")) {
    EXPECT_EQ(after, before);
    return;
  }
  std::istringstream lines(after);
  for (std::string line; std::getline(lines, line);) {
    if (before.find(line + "\n") != std::string::npos) continue;
    bool table = line.rfind('*', 0) == 0 || line == "COMMIT";
    bool accepting_chain = line.rfind(':', 0) == 0 && line.find(" ACCEPT []") != std::string::npos;
    EXPECT_TRUE(table || accepting_chain) << "revert without nft left `" << line << "`:\n" << after;
  }
}

}  // namespace fdrill

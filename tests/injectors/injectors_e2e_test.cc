// The network injectors on the real kernel: two network namespaces of this
// test's own (fdi-<pid>a, fdi-<pid>b; never the fabric's fdrill-*/fdm-*)
// joined by a veth pair fab0 <-> fab0, 198.18.200.1/24 and .2/24. Each
// injector runs through a RealProcessRunner whose commands run inside fdi-a
// (`ip netns exec`), as an agent inside an emulated node does. A TCP
// listener lives in fdi-b; the client socket is made in fdi-a (sockets keep
// the namespace they were created in). Checks: the fault blocks a TCP connect,
// the revert lets it through again, and iptables-save (counters aside) reads
// exactly as before. Needs root; the namespaces are deleted in TearDown
// whatever happened.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <regex>
#include <thread>

#include "harness/host/real_process_runner.h"
#include "injectors/injector.h"

namespace fdrill {
namespace {

constexpr uint16_t kPort = 5201;
constexpr char kServer[] = "198.18.200.2";

// Runs every command inside one network namespace.
class NamespaceRunner final : public ProcessRunner {
 public:
  explicit NamespaceRunner(std::string ns) : ns_(std::move(ns)) {}
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration timeout) override {
    std::vector<std::string> wrapped = {"ip", "netns", "exec", ns_};
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    return real_.Run(wrapped, timeout);
  }

 private:
  std::string ns_;
  RealProcessRunner real_;
};

// A socket created in namespace `ns` (setns on a throwaway thread).
int SocketIn(const std::string& ns) {
  int fd = -1;
  std::thread t([&] {
    int nsfd = open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (nsfd < 0) return;
    if (setns(nsfd, CLONE_NEWNET) == 0) fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    close(nsfd);
  });
  t.join();
  return fd;
}

sockaddr_in Addr(const char* ip) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(kPort);
  inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

class InjectorsE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces, iptables)";
    a_ = "fdi-" + std::to_string(getpid()) + "a";
    b_ = "fdi-" + std::to_string(getpid()) + "b";
    DeleteNamespaces();  // a crashed earlier run with this pid
    for (const auto& argv : std::vector<std::vector<std::string>>{
             {"ip", "netns", "add", a_},
             {"ip", "netns", "add", b_},
             {"ip", "-n", a_, "link", "add", "fab0", "type", "veth", "peer", "name", "fab0", "netns", b_},
             {"ip", "-n", a_, "addr", "add", "198.18.200.1/24", "dev", "fab0"},
             {"ip", "-n", b_, "addr", "add", "198.18.200.2/24", "dev", "fab0"},
             {"ip", "-n", a_, "link", "set", "fab0", "up"},
             {"ip", "-n", b_, "link", "set", "fab0", "up"},
             {"ip", "-n", a_, "link", "set", "lo", "up"},
             {"ip", "-n", b_, "link", "set", "lo", "up"}}) {
      auto r = RunChecked(real_, argv);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
    listener_ = SocketIn(b_);
    ASSERT_GE(listener_, 0);
    int one = 1;
    setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr = Addr(kServer);
    ASSERT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << strerror(errno);
    ASSERT_EQ(listen(listener_, 64), 0);
    runner_ = std::make_unique<NamespaceRunner>(a_);
    ASSERT_TRUE(Connects()) << "the fresh pair does not connect; nothing below would mean anything";
  }

  void TearDown() override {
    if (listener_ >= 0) close(listener_);
    DeleteNamespaces();
  }

  void DeleteNamespaces() {
    for (const auto& ns : {a_, b_}) {
      if (!ns.empty()) (void)real_.Run({"ip", "netns", "del", ns}, std::chrono::seconds(10));
    }
  }

  Host host() { return Host{runner_.get(), &sysfs_}; }

  // A TCP connect from fdi-a to the listener in fdi-b within `wait`.
  bool Connects(std::chrono::milliseconds wait = std::chrono::milliseconds(1500)) {
    int fd = SocketIn(a_);
    if (fd < 0) return false;
    sockaddr_in addr = Addr(kServer);
    bool ok = false;
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      ok = true;
    } else if (errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, static_cast<int>(wait.count())) == 1) {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        ok = err == 0;
      }
    }
    close(fd);
    while (true) {  // drain the backlog
      int c = accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (c < 0) break;
      close(c);
    }
    return ok;
  }

  // iptables-save inside fdi-a without its comments and counters.
  std::string Ruleset() {
    auto out = RunChecked(*runner_, {"iptables-save"});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (!out.ok()) return "";
    std::string text = std::regex_replace(*out, std::regex("^#.*\n", std::regex::multiline), "");
    return std::regex_replace(text, std::regex("\\[[0-9]+:[0-9]+\\]"), "[]");
  }

  std::unique_ptr<Fault> Make(const std::string& kind, const Json& params) {
    auto f = MakeFault(kind, params, host());
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(*f) : nullptr;
  }

  // Capture, Apply, Verify; the connect must fail; Revert, VerifyReverted;
  // it must succeed again and the ruleset must read as before.
  void BlocksThenRestores(const std::string& kind, const Json& params) {
    std::string before = Ruleset();
    auto f = Make(kind, params);
    ASSERT_NE(f, nullptr);
    ASSERT_TRUE(f->Capture().ok()) << f->Capture().ToString();
    Status applied = f->Apply();
    EXPECT_TRUE(applied.ok()) << applied.ToString();
    if (applied.ok()) {
      Status v = f->Verify();
      EXPECT_TRUE(v.ok()) << v.ToString();
      EXPECT_FALSE(Connects()) << kind << " " << params.dump() << " let a TCP connect through";
    }
    Status reverted = f->Revert();
    ASSERT_TRUE(reverted.ok()) << reverted.ToString();
    ASSERT_TRUE(f->Revert().ok());  // twice is harmless on the real kernel too
    Status verified = f->VerifyReverted();
    EXPECT_TRUE(verified.ok()) << verified.ToString();
    EXPECT_TRUE(Connects()) << kind << " left the pair unable to connect";
    EXPECT_EQ(Ruleset(), before);
  }

  RealProcessRunner real_;
  RealSysFs sysfs_;
  std::unique_ptr<NamespaceRunner> runner_;
  std::string a_, b_;
  int listener_ = -1;
};

TEST_F(InjectorsE2e, LinkLossHundredPercentEgressBlocksConnect) {
  BlocksThenRestores("link_loss", {{"interface", "fab0"}, {"percent", 100}});
}

TEST_F(InjectorsE2e, LinkLossHundredPercentIngressFromPeerBlocksConnect) {
  // The raw table does not exist in a fresh namespace: Revert must delete the one it made.
  BlocksThenRestores("link_loss",
                     {{"interface", "fab0"}, {"percent", "100%"}, {"direction", "ingress"}, {"peer", kServer}});
}

TEST_F(InjectorsE2e, LinkLossPartialRuleIsWhatTheKernelHolds) {
  // An unrelated rule in a table that exists: it stays, and so does the table.
  ASSERT_TRUE(RunChecked(*runner_, {"iptables", "-A", "INPUT", "-p", "icmp", "-j", "ACCEPT"}).ok());
  std::string before = Ruleset();
  auto f = Make("link_loss", {{"interface", "fab0"}, {"percent", 1.5}});
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->Capture().ok());
  ASSERT_TRUE(f->Apply().ok());
  Status v = f->Verify();  // iptables -C finds "--probability 0.015" though -S prints 0.01500000013
  EXPECT_TRUE(v.ok()) << v.ToString();
  EXPECT_NE(Ruleset().find("--probability 0.01500000013 -j DROP"), std::string::npos) << Ruleset();
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->VerifyReverted().ok());
  EXPECT_EQ(Ruleset(), before);
  EXPECT_TRUE(Connects());
}

TEST_F(InjectorsE2e, LinkPartitionBlocksThenRestores) {
  BlocksThenRestores("link_partition", {{"peers", {kServer, "198.18.201.7"}}});
}

TEST_F(InjectorsE2e, LinkPartitionOnOneInterfaceBlocksThenRestores) {
  ASSERT_TRUE(RunChecked(*runner_, {"iptables", "-A", "OUTPUT", "-p", "udp", "-j", "ACCEPT"}).ok());
  BlocksThenRestores("link_partition", {{"peers", {kServer}}, {"interface", "fab0"}});
}

TEST_F(InjectorsE2e, LinkDownBlocksThenRestores) { BlocksThenRestores("link_down", {{"interface", "fab0"}}); }

TEST_F(InjectorsE2e, RestoredFromJournalRevertsOnTheRealKernel) {
  std::string before = Ruleset();
  Json params = {{"peers", {kServer}}};
  auto first = Make("link_partition", params);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(first->Capture().ok());
  Json record = {{"kind", "link_partition"}, {"params", params}, {"saved", first->Saved()}};
  ASSERT_TRUE(first->Apply().ok());
  first.reset();  // the agent died
  EXPECT_FALSE(Connects());
  auto again = RestoreFault(record, host());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE((*again)->Revert().ok());
  ASSERT_TRUE((*again)->VerifyReverted().ok());
  EXPECT_TRUE(Connects());
  EXPECT_EQ(Ruleset(), before);
}

TEST_F(InjectorsE2e, LinkRatePerPeerBuildsAnHtbTreeTheKernelReportsBack) {
  // Verify parses the kernel's own `tc class/filter show`; other destinations
  // go out htb's direct queue, unshaped, so the connect still works.
  auto f = Make("link_rate", {{"interface", "fab0"}, {"rate", "20mbit"}, {"peers", {kServer, "198.18.201.0/24"}}});
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->Capture().ok());
  Status applied = f->Apply();
  ASSERT_TRUE(applied.ok()) << applied.ToString();
  Status v = f->Verify();
  EXPECT_TRUE(v.ok()) << v.ToString();
  EXPECT_TRUE(Connects());
  ASSERT_TRUE(f->Revert().ok());
  ASSERT_TRUE(f->Revert().ok());
  Status r = f->VerifyReverted();
  EXPECT_TRUE(r.ok()) << r.ToString();
  EXPECT_FALSE(f->Verify().ok());
}

}  // namespace
}  // namespace fdrill

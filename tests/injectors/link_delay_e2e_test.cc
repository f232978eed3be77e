// link_delay on the real kernel, in two network namespaces of this test's own
// (fdq-<pid>a, fdq-<pid>b; never the fabric's fdrill-*/fdm-* nor the other
// tests' fdi-*/fdt-*) joined by a veth pair fab0 <-> fab0, 198.18.200.1/24
// and .2/24. A TCP echo server lives in fdq-b; the client socket is made in
// fdq-a. Commands run inside fdq-a (`ip netns exec`), /proc reads too
// (/proc/net is per network namespace), and Apply runs on a thread that has
// entered fdq-a, so the delay line's netlink socket binds its queue there,
// as it would in an agent running inside an emulated node.
// Checks: the TCP round trip rises by at least the delay while applied and
// falls back after Revert; the ruleset reads as before and no queue stays
// bound. Needs root; the namespaces are deleted in TearDown whatever happened.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iostream>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "injectors/injector.h"
#include "injectors/nfqueue_delay_line.h"
#include "tests/support/netns_pair.h"

namespace fdrill {
namespace {

using Millis = std::chrono::duration<double, std::milli>;
constexpr uint16_t kPort = 5202;
constexpr const char* kServer = NetnsPair::kAddressB;

class LinkDelayE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces, iptables, NFQUEUE)";
    Status made = pair_.Create("fdq");
    ASSERT_TRUE(made.ok()) << made.ToString();
    a_ = pair_.a();
    b_ = pair_.b();
    runner_ = std::make_unique<NamespaceRunner>(a_);
    sysfs_ = std::make_unique<NamespaceSysFs>(runner_.get());
    int listener = SocketIn(b_);
    ASSERT_GE(listener, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr = Ipv4Address(kServer, kPort);
    ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
        << strerror(errno);
    ASSERT_EQ(listen(listener, 4), 0);
    server_ = std::thread([this, listener] { Echo(listener); });
    client_ = SocketIn(a_);
    ASSERT_GE(client_, 0);
    setsockopt(client_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ASSERT_EQ(connect(client_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
        << strerror(errno);
  }

  void TearDown() override {
    stop_ = true;
    if (client_ >= 0) close(client_);
    if (server_.joinable()) server_.join();
    pair_.Delete();
  }

  // Echoes one connection byte for byte until the test stops.
  void Echo(int listener) {
    int conn = -1;
    while (!stop_) {
      pollfd p{conn >= 0 ? conn : listener, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      if (conn < 0) {
        conn = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        int one = 1;
        if (conn >= 0) setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        continue;
      }
      char c;
      if (read(conn, &c, 1) != 1 || write(conn, &c, 1) != 1) break;
    }
    if (conn >= 0) close(conn);
    close(listener);
  }

  // One byte there and back over the established connection; -1 on timeout.
  double RoundTripMs() {
    auto start = std::chrono::steady_clock::now();
    char c = 'x';
    if (write(client_, &c, 1) != 1) return -1;
    pollfd p{client_, POLLIN, 0};
    if (poll(&p, 1, 2000) != 1 || read(client_, &c, 1) != 1) return -1;
    return Millis(std::chrono::steady_clock::now() - start).count();
  }

  struct Rtts {
    double min, median, p90, max;
  };
  Rtts Measure(int n = 21) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) {
      double ms = RoundTripMs();
      EXPECT_GE(ms, 0) << "round trip " << i << " timed out";
      v.push_back(ms);
    }
    std::sort(v.begin(), v.end());
    return {v.front(), v[v.size() / 2], v[v.size() * 9 / 10], v.back()};
  }
  static std::string Show(const Rtts& r) {
    char buf[128];
    std::snprintf(buf, sizeof(buf), "min %.3f ms, median %.3f ms, p90 %.3f ms, max %.3f ms", r.min,
                  r.median, r.p90, r.max);
    return buf;
  }

  std::string Ruleset() { return RulesetWithoutCounters(*runner_); }
  std::string Queues() {
    auto text = sysfs_->Read("/proc/net/netfilter/nfnetlink_queue");
    return text.ok() ? *text : "";
  }

  Host host() { return Host{runner_.get(), sysfs_.get()}; }

  // Capture, Apply (inside fdq-a), Verify, measure; Revert twice,
  // VerifyReverted, measure; ruleset and queue table as before.
  void DelaysThenRestores(const Json& params, Duration min_added, Duration max_added) {
    std::string rules_before = Ruleset();
    Rtts before = Measure();
    auto made = MakeFault("link_delay", params, host());
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    auto& f = *made;
    Status captured = f->Capture();
    ASSERT_TRUE(captured.ok()) << captured.ToString();
    EXPECT_EQ(f->Saved()["mode"], "nfqueue")
        << "this kernel has sch_netem; the e2e is for the delay line";
    Status applied = InNamespace(a_, [&] { return f->Apply(); });
    EXPECT_TRUE(applied.ok()) << applied.ToString();
    Rtts during{};
    if (applied.ok()) {
      Status v = f->Verify();
      EXPECT_TRUE(v.ok()) << v.ToString();
      std::cout << "  queue table while applied: " << Queues();
      during = Measure();
      double lo = Millis(min_added).count(), hi = Millis(max_added).count();
      // The delay line holds every packet for the delay, so the fastest
      // round trip during it is the fastest before plus the delay: minimum
      // against minimum (against the median before, a noisy baseline once
      // read 19.53 ms for 20 ms), less 0.5 ms for the delay line's own
      // timer (min against min once read 19.98 ms). The upper bound holds
      // the 90th percentile of 21 round trips (the third largest), so a
      // jitter window is still checked but one or two round trips caught by
      // a busy machine's scheduler are not the fault's (a max once read
      // 32.6 ms for 20 ms, median 20.5 ms).
      EXPECT_GE(during.min - before.min, lo - 0.5) << Show(before) << " / " << Show(during);
      EXPECT_LE(during.p90 - before.median, hi) << Show(during);
    }
    Status reverted = f->Revert();
    ASSERT_TRUE(reverted.ok()) << reverted.ToString();
    ASSERT_TRUE(f->Revert().ok());
    Status verified = f->VerifyReverted();
    EXPECT_TRUE(verified.ok()) << verified.ToString();
    Rtts after = Measure();
    EXPECT_LT(after.median, before.median + 2.0) << Show(after);
    ExpectRulesetRestored(*runner_, rules_before, Ruleset());
    EXPECT_EQ(Queues(), "");
    std::cout << "  " << params.dump() << "\n  before:  " << Show(before)
              << "\n  applied: " << Show(during) << "\n  after:   " << Show(after) << "\n";
  }

  NetnsPair pair_;
  std::unique_ptr<NamespaceRunner> runner_;
  std::unique_ptr<NamespaceSysFs> sysfs_;
  std::string a_, b_;
  std::thread server_;
  std::atomic<bool> stop_{false};
  int client_ = -1;
};

TEST_F(LinkDelayE2e, EgressDelayRaisesTheRoundTripByTheDelay) {
  // A round trip holds each client segment once: +20 ms, plus the line's wakeup.
  DelaysThenRestores({{"interface", "fab0"}, {"delay", "20ms"}}, std::chrono::milliseconds(20),
                     std::chrono::milliseconds(30));
}

TEST_F(LinkDelayE2e, IngressFromThePeerWithJitterStaysInItsWindow) {
  DelaysThenRestores({{"interface", "fab0"},
                      {"delay", "10ms"},
                      {"jitter", "3ms"},
                      {"direction", "ingress"},
                      {"peer", kServer}},
                     std::chrono::milliseconds(7), std::chrono::milliseconds(20));
}

TEST_F(LinkDelayE2e, ADeadAgentsRuleBypassesAndTheJournalSweepRemovesIt) {
  std::string rules_before = Ruleset();
  Json params = {{"interface", "fab0"}, {"delay", "20ms"}};
  auto first = MakeFault("link_delay", params, host());
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE((*first)->Capture().ok());
  Json record = {{"kind", "link_delay"}, {"params", params}, {"saved", (*first)->Saved()}};
  Status applied = InNamespace(a_, [&] { return (*first)->Apply(); });
  ASSERT_TRUE(applied.ok()) << applied.ToString();
  EXPECT_GE(Measure(5).min, 20.0);
  first->reset();  // the agent died: its socket closed, the rule stayed
  EXPECT_NE(Ruleset(), rules_before);
  Rtts orphaned = Measure();
  EXPECT_LT(orphaned.p90, 10.0) << "--queue-bypass should pass packets undelayed: "
                                << Show(orphaned);
  auto again = RestoreFault(record, host());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE((*again)->Verify().ok());  // no reader: the fault is not in force
  ASSERT_TRUE((*again)->Revert().ok());
  Status verified = (*again)->VerifyReverted();
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  ExpectRulesetRestored(*runner_, rules_before, Ruleset());
  std::cout << "  orphaned rule, no reader: " << Show(orphaned) << "\n";
}

TEST_F(LinkDelayE2e, ABoundQueueIsRefusedByCaptureAndByTheKernel) {
  Json params = {{"interface", "fab0"}, {"delay", "5ms"}};
  auto first = MakeFault("link_delay", params, host());
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE((*first)->Capture().ok());
  ASSERT_TRUE(InNamespace(a_, [&] { return (*first)->Apply(); }).ok());
  auto second = MakeFault("link_delay", params, host());
  ASSERT_TRUE(second.ok());
  Status s = (*second)->Capture();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  // Past Capture, the kernel itself refuses a second reader on the queue.
  uint16_t queue = (*first)->Saved()["queue"].get<uint16_t>();
  auto line = MakeNfqueueDelayLine();
  Status started = InNamespace(a_, [&] {
    return line->Start({queue, std::chrono::milliseconds(5), Duration(0)});
  });
  EXPECT_EQ(started.code(), StatusCode::kFailedPrecondition) << started.ToString();
  line->Stop();
  ASSERT_TRUE((*first)->Revert().ok());
  EXPECT_TRUE((*first)->VerifyReverted().ok());
  EXPECT_EQ(Queues(), "");
  std::cout << "  second reader: " << started.message() << "\n";
}

}  // namespace
}  // namespace fdrill

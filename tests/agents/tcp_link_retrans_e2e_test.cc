// TcpLinkRetrans against the real kernel (issue 25), in two namespaces of its
// own (fdr-<pid>a/b, tests/support/netns_pair.h): a connection from a to b
// loses segments to an iptables rule in a; a's fab0 counter rises by exactly
// what a's Tcp RetransSegs rose by, while the sockets were listed only on the
// first sample and on the one after the retransmissions. Needs root and
// iptables' statistic match; skips otherwise.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "agents/tcp_link_retrans.h"
#include "tests/support/netns_pair.h"

namespace fdrill {
namespace {

constexpr uint16_t kPort = 5311;

// RealTcpSockets, counting its lists.
class CountingSockets final : public TcpSockets {
 public:
  Result<std::vector<TcpSocket>> List() override {
    ++lists;
    return real.List();
  }
  Result<std::vector<InterfaceAddress>> Addresses() override { return real.Addresses(); }
  Result<TcpActivity> Activity() override { return real.Activity(); }

  RealTcpSockets real;
  int lists = 0;
};

TEST(TcpLinkRetransE2e, CountsWhatALossyConnectionRetransmittedListingOnlyAfterIt) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: network namespaces and iptables";
  NetnsPair pair;
  ASSERT_TRUE(pair.Create("fdr").ok());
  NamespaceRunner in_a(pair.a());
  if (!in_a.Has("iptables")) GTEST_SKIP() << "no iptables";

  const int listener = SocketIn(pair.b());
  ASSERT_GE(listener, 0);
  sockaddr_in b = Ipv4Address(NetnsPair::kAddressB, kPort);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&b), sizeof(b)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  const int client = SocketIn(pair.a());
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&b), sizeof(b)), 0);
  const int server = accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);

  CountingSockets sockets;
  TcpLinkRetrans links(sockets);
  // Sampled from a thread in a, as the agent of node a samples.
  auto sample = [&] {
    return InNamespace(pair.a(), [&]() -> Result<Json> {
      Json out = Json::object();
      links.Sample("", out);
      return out;
    });
  };
  auto retrans_segs = [&] {
    return InNamespace(pair.a(), [&]() -> Result<uint64_t> {
      auto a = sockets.Activity();
      if (!a.ok()) return a.status();
      return a->retrans_segs;
    });
  };
  auto before = retrans_segs();
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  auto first = sample();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)["fab0.tcp_retrans_segs"], 0) << first->dump();
  ASSERT_TRUE(sample().ok());
  EXPECT_EQ(sockets.lists, 1) << "a quiet namespace's sockets were listed again";

  ASSERT_TRUE(
      RunChecked(in_a, {"iptables", "-A", "OUTPUT", "-p", "tcp", "-d", NetnsPair::kAddressB, "-m",
                        "statistic", "--mode", "random", "--probability", "0.03", "-j", "DROP"})
          .ok());
  // Until a has retransmitted something (a drop hits a whole GSO
  // super-packet: some MiB may pass first), then to the end of the stream.
  std::thread reader([&] {
    std::vector<char> buffer(1 << 16);
    while (recv(server, buffer.data(), buffer.size(), 0) > 0) {
    }
  });
  auto retransmitted = [&] {
    auto now = retrans_segs();
    return now.ok() && *now > *before;
  };
  const std::vector<char> data(4 << 20, 'x');
  bool sending = true;  // no ASSERT while the reader runs
  for (int round = 0; sending && round < 64 && !retransmitted(); ++round) {
    for (size_t sent = 0; sending && sent < data.size();) {
      const ssize_t n = send(client, data.data() + sent, data.size() - sent, 0);
      sending = n > 0;
      if (sending) sent += static_cast<size_t>(n);
    }
  }
  shutdown(client, SHUT_WR);
  reader.join();  // all delivered: nothing left to retransmit
  ASSERT_TRUE(sending) << "send failed";
  // The last ACKs (b -> a is not dropped) reach a within the veth's
  // microseconds; no timer fires after them.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  auto after = retrans_segs();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_GT(*after, *before) << "no segment was retransmitted: the drop rule did not bite";
  auto lossy = sample();
  ASSERT_TRUE(lossy.ok()) << lossy.status().ToString();
  EXPECT_EQ((*lossy)["fab0.tcp_retrans_segs"], *after - *before) << lossy->dump();
  EXPECT_EQ(sockets.lists, 2);
  ASSERT_TRUE(sample().ok());
  EXPECT_EQ(sockets.lists, 2);
  close(server);
  close(client);
  close(listener);
}

}  // namespace
}  // namespace fdrill

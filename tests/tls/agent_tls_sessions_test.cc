// The agent's sessions over mutual TLS, end to end in one process
// (tests/tls/agent_tls.h): clients that have no cert, a cert from another CA,
// send garbage, a plaintext or oversize frame, or stall, are closed, the
// agent keeps serving, and no request of theirs reaches AgentService (the
// audit log holds only the good client's subject; the kernel saw nothing).
// Replies that outrun the socket, a push to a client that reset, the
// --insecure agent, and the tick loop's next wake-up.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/tls/agent_tls.h"

namespace fdrill {
namespace {

namespace asio = boost::asio;
using tls_test::AgentTlsTest;
using tls_test::Client;
using tls_test::Error;

TEST_F(AgentTlsTest, ClientWithoutACertIsRefused) {
  StartServer();
  auto ctx = CertlessCtx();
  ExpectRefused(ctx.get());
}

TEST_F(AgentTlsTest, ClientWithACertFromAnotherCaIsRefused) {
  StartServer();
  // Trusts the agent's CA (so its own side of the handshake succeeds) but
  // presents a cert the agent's CA never signed.
  auto ctx = ClientCtx(other_pki_);
  ctx->load_verify_file((pki_ / "ca.pem").string());
  ExpectRefused(ctx.get());
}

TEST_F(AgentTlsTest, GarbageBytesAreRefused) {
  StartServer();
  ExpectClosedAfter("GET / HTTP/1.1\r\nHost: n1\r\n\r\n");
}

TEST_F(AgentTlsTest, PlaintextFrameIsRefused) {
  StartServer();
  ExpectClosedAfter(EncodeFrame(MakeRequest("apply", 1, ApplyBody())));
}

TEST_F(AgentTlsTest, OversizeFrameIsRefusedBeforeAndAfterTheHandshake) {
  StartServer();
  std::string huge_header("\xff\xff\xff\xff", 4);
  Client raw(nullptr);
  ASSERT_FALSE(raw.Connect(port_));
  ASSERT_FALSE(raw.Send(huge_header + std::string(1000, 'x')));
  EXPECT_TRUE(raw.ClosedByPeer());

  // Inside an authenticated session the frame limit still holds: an error
  // reply, then the connection closes.
  auto ctx = ClientCtx(pki_);
  Client big(ctx.get());
  ASSERT_FALSE(big.Connect(port_));
  uint32_t n = kMaxFrameBytes + 1;
  std::string header = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                        static_cast<char>(n >> 8), static_cast<char>(n)};
  ASSERT_FALSE(big.Send(header + std::string(1000, '{')));
  auto reply = big.Receive();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_FALSE((*reply)["ok"].get<bool>());
  EXPECT_TRUE(big.ClosedByPeer());

  ExpectGoodClientServed();
  ExpectOnlyTheControllerGotIn();
}

TEST_F(AgentTlsTest, ClientThatNeverHandshakesIsDroppedAfterTheTimeout) {
  StartServer(true, std::chrono::milliseconds(300));
  Client staller(nullptr);
  ASSERT_FALSE(staller.Connect(port_));
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(staller.ClosedByPeer());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  ExpectGoodClientServed();
}

TEST_F(AgentTlsTest, BareConnectAndCloseDoesNotDisturbTheAgent) {
  StartServer();
  for (int i = 0; i < 5; ++i) {
    Client probe(nullptr);
    ASSERT_FALSE(probe.Connect(port_));
  }
  ExpectGoodClientServed();
  ExpectOnlyTheControllerGotIn();
}

TEST_F(AgentTlsTest, RepliesOutrunningTheSocketArriveWholeAndInOrder) {
  StartServer();
  auto ctx = ClientCtx(pki_);
  ExpectRepliesInOrderWhenReadLate(ctx.get());
  ExpectGoodClientServed();
}

TEST_F(AgentTlsTest, RepliesOutrunningAPlaintextSocketArriveWholeAndInOrder) {
  StartServer(/*tls=*/false);
  ExpectRepliesInOrderWhenReadLate(nullptr);
}

// A push goes to every session; one whose client has reset its connection
// fails its write there and then, and leaves the server's sessions while
// the push is still going round them. The other client gets the push and
// is served on.
TEST_F(AgentTlsTest, APushToAClientThatResetHarmsNoOtherSession) {
  StartServer();
  auto ctx = ClientCtx(pki_);
  Client gone(ctx.get()), stays(ctx.get());
  ASSERT_FALSE(gone.Connect(port_));
  ASSERT_FALSE(stays.Connect(port_));
  ASSERT_TRUE(Ok(gone.Call("hello")));  // both sessions past their handshakes
  ASSERT_TRUE(Ok(stays.Call("lease", {{"ttl_ms", 5000}})));
  // On the agent's thread, so that it cannot see the reset before the push:
  // the client resets, the lease lapses, and the lapse is pushed.
  OnAgent([&] {
    Error ec;
    gone.socket().set_option(asio::socket_base::linger(true, 0), ec);
    gone.socket().close(ec);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the RST is in
    clock_.Advance(std::chrono::seconds(6));
    service_->Tick();
    return 0;
  });
  std::string type;
  for (int i = 0; i < 5 && type != "lease_expired"; ++i) {
    auto pushed = stays.Receive();
    ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
    type = pushed->value("type", "");
  }
  EXPECT_EQ(type, "lease_expired");
  EXPECT_TRUE(Ok(stays.Call("hello")));
  ExpectGoodClientServed();
}

TEST_F(AgentTlsTest, InsecureAgentServesPlaintextWithNoSubject) {
  StartServer(/*tls=*/false);
  Client plain(nullptr);
  ASSERT_FALSE(plain.Connect(port_));
  auto hello = plain.Call("hello");
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
  EXPECT_EQ((*hello)["node"], "n1");
  EXPECT_EQ(AuditSubjects(), (std::vector<std::string>{""}));
}

// The tick loop's next wake-up (NextTick). A tick whose timer had fired
// when a request's TickSoon moved the wake-up to a flap's up edge runs
// early; the edge's wake-up stands (from the grid it landed a whole
// interval past the edge: a 100 ms flap measured 197 ms on the wire).
TEST(AgentServerTick, ATickThatRanBeforeItsWakeUpKeepsTheWakeUpARequestSet) {
  using std::chrono::milliseconds;
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  // The apply at t0 set the wake-up to its up edge, t0 + 100 ms; the idle
  // tick queued before it runs at t0 + 1 ms and asks for the edge, 99 ms on.
  EXPECT_EQ(NextTick(t0 + milliseconds(100), t0 + milliseconds(1), milliseconds(99)),
            t0 + milliseconds(100));
  // Something sooner than the wake-up set is sooner still.
  EXPECT_EQ(NextTick(t0 + milliseconds(100), t0 + milliseconds(1), milliseconds(30)),
            t0 + milliseconds(31));
  // On time: the cadence keeps its grid; an edge closer than kBusyTick is
  // counted from now.
  EXPECT_EQ(NextTick(t0, t0 + milliseconds(2), AgentService::kIdleTick), t0 + milliseconds(100));
  EXPECT_EQ(NextTick(t0, t0 + milliseconds(2), milliseconds(5)), t0 + milliseconds(7));
}

}  // namespace
}  // namespace fdrill

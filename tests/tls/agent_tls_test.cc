// Mutual TLS between controller and agent, end to end in one process: a real
// AgentServer with a real AgentService (over the fake kernel) on 127.0.0.1,
// and clients that behave, that have no cert, a cert from another CA, send
// garbage, an oversize frame, or stall. Every refused client is closed, the
// agent keeps serving, and no request of theirs reaches AgentService (the
// audit log holds only the good client's subject; the kernel saw nothing).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include "agents/agent_service.h"
#include "agents/server.h"
#include "harness/controller/agent_link.h"
#include "harness/controller/connect_all.h"
#include "harness/tls/certs.h"
#include "harness/tls/tls_context.h"
#include "harness/tls/tls_socket.h"
#include "tests/agents/test_agent.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_net.h"
#include "tests/support/json_lines.h"
#include "tests/support/scratch_dir.h"

namespace fdrill {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace fs = std::filesystem;
using asio::ip::tcp;
using TlsStream = ssl::stream<tcp::socket>;
using Error = boost::system::error_code;

constexpr auto kWait = std::chrono::seconds(5);
constexpr char kController[] = "CN=controller,OU=controller";

// A blocking test client over its own io_context; every operation gives up
// after kWait so a misbehaving server fails the test instead of hanging it.
class Client {
 public:
  // ctx nullptr: plain TCP.
  explicit Client(ssl::context* ctx) : plain_(io_) {
    if (ctx) tls_ = std::make_unique<TlsStream>(io_, *ctx);
  }
  tcp::socket& socket() { return tls_ ? tls_->next_layer() : plain_; }

  Error Connect(uint16_t port) {
    Error ec;
    socket().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
    if (ec || !tls_) return ec;
    return Run([&](auto done) { tls_->async_handshake(ssl::stream_base::client, done); });
  }
  Error Send(const std::string& bytes) {
    return Run([&](auto done) {
      if (tls_)
        asio::async_write(*tls_, asio::buffer(bytes), done);
      else
        asio::async_write(plain_, asio::buffer(bytes), done);
    });
  }
  // One frame from the agent, or the error that ended the connection.
  // Bytes past that frame stay in the client's decoder for the next call.
  Result<Json> Receive() {
    for (;;) {
      auto msg = decoder_.Next();
      if (!msg.ok()) return msg.status();
      if (msg->has_value()) return **msg;
      char buf[4096];
      size_t n = 0;
      Error ec = Run([&](auto done) {
        auto on_read = [&n, done](Error e, size_t got) mutable {
          n = got;
          done(e, got);
        };
        if (tls_)
          tls_->async_read_some(asio::buffer(buf), on_read);
        else
          plain_.async_read_some(asio::buffer(buf), on_read);
      });
      if (ec == asio::error::timed_out) return DeadlineExceeded("no bytes within 5 s");
      if (ec) return Unavailable("closed: " + ec.message());
      decoder_.Feed(std::string_view(buf, n));
    }
  }
  Result<Json> Call(const std::string& type, Json body = Json::object()) {
    if (Error ec = Send(EncodeFrame(MakeRequest(type, ++id_, std::move(body)))); ec) {
      return Unavailable("send: " + ec.message());
    }
    return Receive();
  }
  // True when the agent closes the connection (EOF or error) within kWait.
  bool ClosedByPeer() {
    for (;;) {
      auto r = Receive();
      if (!r.ok()) return r.status().code() != StatusCode::kDeadlineExceeded;
    }
  }

 private:
  template <typename Start>
  Error Run(Start start) {
    Error result = asio::error::timed_out;
    bool done = false;
    start([&](Error ec, size_t = 0) {
      result = ec;
      done = true;
    });
    io_.restart();
    io_.run_for(kWait);
    if (!done) {
      Error ignored;
      socket().close(ignored);
      io_.restart();
      io_.run();
    }
    return done ? result : Error(asio::error::timed_out);
  }

  asio::io_context io_;
  std::unique_ptr<TlsStream> tls_;
  tcp::socket plain_;
  FrameDecoder decoder_;
  uint64_t id_ = 0;
};

class AgentTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ScratchPath("fdrill-tls-test-");
    pki_ = dir_ / "pki";
    other_pki_ = dir_ / "other-pki";
    ASSERT_TRUE(InitCa(pki_.string()).ok());
    ASSERT_TRUE(InitCa(other_pki_.string()).ok());
    for (const char* name : {"n1", "n2"})
      ASSERT_TRUE(IssueCert(pki_.string(), name, pki_.string(), CertRole::kNode).ok());
    ASSERT_TRUE(IssueCert(pki_.string(), "controller", pki_.string(), CertRole::kController).ok());
    ASSERT_TRUE(IssueCert(pki_.string(), "ctl2", pki_.string(), CertRole::kController).ok());
    ASSERT_TRUE(IssueCert(pki_.string(), "watcher", pki_.string(), CertRole::kObserver).ok());
    ASSERT_TRUE(
        IssueCert(other_pki_.string(), "controller", other_pki_.string(), CertRole::kController)
            .ok());
    fs::create_directories(dir_ / "state");
  }

  void TearDown() override {
    StopServer();
    fs::remove_all(dir_);
  }

  // Starts the agent for node n1 on a random 127.0.0.1 port; tls false: --insecure.
  void StartServer(bool tls = true,
                   std::chrono::milliseconds handshake_timeout = std::chrono::seconds(5)) {
    if (tls) {
      auto ctx = MakeServerContext(TlsConfig::InDir(pki_.string(), "n1"));
      ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
      server_ctx_ = std::move(ctx).value();
    }
    AgentConfig config = TestAgentConfig("n1", dir_ / "state");
    config.revoked_file = (pki_ / kRevokedFile).string();
    if (configure_) configure_(config);
    service_ = std::make_unique<AgentService>(config, Host{&kernel_, nullptr}, clock_);
    server_ = std::make_unique<AgentServer>(io_, *service_, server_ctx_.get());
    server_->set_handshake_timeout(handshake_timeout);
    ASSERT_TRUE(server_->Listen("127.0.0.1", 0).ok());
    port_ = server_->port();
    ASSERT_NE(port_, 0);
    server_->Start();
    io_thread_ = std::thread([this] { io_.run(); });
  }

  void StopServer() {
    if (!io_thread_.joinable()) return;
    asio::post(io_, [this] {
      server_->StopAccepting();
      io_.stop();
    });
    io_thread_.join();
  }

  // Runs f on the agent's io thread (the service is single-threaded).
  template <typename F>
  auto OnAgent(F f) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    asio::post(io_, [&task] { task(); });
    return result.get();
  }
  size_t KernelMutations() {
    return OnAgent([this] { return kernel_.Mutations().size(); });
  }

  std::unique_ptr<ssl::context> ClientCtx(const fs::path& pki,
                                          const std::string& name = "controller") {
    auto ctx = MakeClientContext(TlsConfig::InDir(pki.string(), name));
    EXPECT_TRUE(ctx.ok()) << ctx.status().ToString();
    return ctx.ok() ? std::move(ctx).value() : nullptr;
  }
  // A client that trusts our CA but presents no certificate.
  std::unique_ptr<ssl::context> CertlessCtx() {
    auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_3_VERSION);
    ctx->load_verify_file((pki_ / "ca.pem").string());
    ctx->set_verify_mode(ssl::verify_peer);
    return ctx;
  }

  // The good client: hello answered by n1.
  void ExpectGoodClientServed() {
    auto ctx = ClientCtx(pki_);
    Client good(ctx.get());
    ASSERT_FALSE(good.Connect(port_));
    auto hello = good.Call("hello");
    ASSERT_TRUE(hello.ok()) << hello.status().ToString();
    EXPECT_TRUE((*hello)["ok"].get<bool>()) << hello->dump();
    EXPECT_EQ((*hello)["node"], "n1");
  }

  // The audit log's subjects, one per request that reached AgentService.
  std::vector<std::string> AuditSubjects() {
    std::vector<std::string> out;
    for (const Json& line : ReadJsonLines(dir_ / "state" / "audit.jsonl"))
      out.push_back(line["subject"].get<std::string>());
    return out;
  }

  void ExpectOnlyTheControllerGotIn() {
    for (const auto& s : AuditSubjects()) EXPECT_EQ(s, kController);
    EXPECT_EQ(KernelMutations(), 0u) << "a refused client's request reached the kernel";
  }

  // A TLS client over CTX the agent must refuse: under TLS 1.3 the client
  // may finish its side before the agent checks its cert, so it may even
  // connect, but nothing it sends is answered; the agent serves on.
  void ExpectRefused(ssl::context* ctx) {
    Client client(ctx);
    if (!client.Connect(port_)) {
      auto reply = client.Call("apply", ApplyBody());
      EXPECT_FALSE(reply.ok()) << reply->dump();
    }
    ExpectGoodClientServed();
    ExpectOnlyTheControllerGotIn();
  }

  // A plain TCP client sending BYTES (no handshake): the agent closes the
  // connection and serves on.
  void ExpectClosedAfter(const std::string& bytes) {
    Client client(nullptr);
    ASSERT_FALSE(client.Connect(port_));
    ASSERT_FALSE(client.Send(bytes));
    EXPECT_TRUE(client.ClosedByPeer());
    ExpectGoodClientServed();
    ExpectOnlyTheControllerGotIn();
  }

  // A client that sends many requests before it reads a reply: more replies
  // than the agent's socket can hold (its send buffer is at most
  // net.ipv4.tcp_wmem's 4 MiB here), so the agent's writer must wait for
  // the socket and go on where it stopped, while its reader keeps taking
  // requests. The last two (lease, apply) reach the fake kernel: once they
  // have, every reply is queued and the socket is full. Every reply then
  // arrives, whole and in order.
  void ExpectRepliesInOrderWhenReadLate(ssl::context* ctx) {
    Client client(ctx);
    Error ec;
    client.socket().open(tcp::v4(), ec);
    ASSERT_FALSE(ec);
    client.socket().set_option(asio::socket_base::receive_buffer_size(4096), ec);
    ASSERT_FALSE(client.Connect(port_));
    auto first = client.Call("hello");
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    const size_t n = (8u << 20) / first->dump().size() + 1;  // 8 MiB of replies
    std::string requests;
    for (size_t i = 0; i < n; ++i)
      requests += EncodeFrame(MakeRequest("hello", 2 + i, Json::object()));
    requests += EncodeFrame(MakeRequest("lease", 2 + n, {{"ttl_ms", 5000}}));
    requests += EncodeFrame(MakeRequest("apply", 3 + n, ApplyBody()));
    ASSERT_FALSE(client.Send(requests));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (KernelMutations() == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_GT(KernelMutations(), 0u) << "the agent did not get through the requests in 60 s";
    for (size_t i = 0; i < n + 2; ++i) {
      auto reply = client.Receive();
      ASSERT_TRUE(reply.ok()) << "reply " << i << " of " << n + 2 << ": "
                              << reply.status().ToString();
      ASSERT_EQ(reply->value("id", uint64_t{0}), 2 + i) << reply->dump();
      ASSERT_TRUE(reply->value("ok", false)) << reply->dump();
    }
  }

  // The reply was an ok one.
  static bool Ok(const Result<Json>& reply) { return reply.ok() && reply->value("ok", false); }
  // The reply was a refusal (code permission_denied) whose error holds TEXT.
  static void ExpectDenied(const Result<Json>& reply, const std::string& text) {
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_FALSE(reply->value("ok", true)) << reply->dump();
    EXPECT_EQ(reply->value("code", ""), "permission_denied") << reply->dump();
    EXPECT_NE(reply->value("error", "").find(text), std::string::npos) << reply->dump();
  }
  // A connected client presenting NAME's certificate from our CA.
  std::unique_ptr<Client> ConnectAs(const std::string& name) {
    ctxs_.push_back(ClientCtx(pki_, name));
    auto c = std::make_unique<Client>(ctxs_.back().get());
    EXPECT_FALSE(c->Connect(port_)) << name;
    return c;
  }
  std::vector<std::unique_ptr<ssl::context>> ctxs_;

  Json ApplyBody() {
    return {{"fault_id", "slow"},
            {"kind", "link_rate"},
            {"params", {{"interface", "fab0"}, {"rate", "100mbit"}}}};
  }

  // Changes the agent's config before StartServer builds the service.
  std::function<void(AgentConfig&)> configure_;
  fs::path dir_, pki_, other_pki_;
  FakeNetKernel kernel_;
  FakeClock clock_;
  asio::io_context io_;
  std::unique_ptr<ssl::context> server_ctx_;
  std::unique_ptr<AgentService> service_;
  std::unique_ptr<AgentServer> server_;
  std::thread io_thread_;
  uint16_t port_ = 0;
};

TEST_F(AgentTlsTest, GoodClientIsServedAndAuditedWithItsSubject) {
  StartServer();
  ExpectGoodClientServed();
  auto ctx = ClientCtx(pki_);
  Client good(ctx.get());
  ASSERT_FALSE(good.Connect(port_));
  ASSERT_TRUE(Ok(good.Call("lease", {{"ttl_ms", 5000}})));
  auto applied = good.Call("apply", ApplyBody());
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_TRUE((*applied)["ok"].get<bool>()) << applied->dump();
  EXPECT_GT(KernelMutations(), 0u);
  EXPECT_EQ(AuditSubjects(), (std::vector<std::string>{kController, kController, kController}));
}

// Issue 21: what the agent refuses, whoever asks.

TEST_F(AgentTlsTest, NodeCertificateUsedAsTheControllersIsRefusedAndNothingIsApplied) {
  StartServer();
  // n2's key and certificate in a controller's place: the certificate is
  // for serverAuth only, so the agent's TLS refuses it as a client.
  auto ctx = ClientCtx(pki_, "n2");
  ExpectRefused(ctx.get());
}

TEST_F(AgentTlsTest, ObserverReadsButCannotLeaseApplyOrPanic) {
  StartServer();
  auto watcher = ConnectAs("watcher");
  EXPECT_TRUE(Ok(watcher->Call("hello")));
  ExpectDenied(watcher->Call("lease", {{"ttl_ms", 5000}}), "observer certificate");
  ExpectDenied(watcher->Call("apply", ApplyBody()), "observer certificate");
  ExpectDenied(watcher->Call("revert_all", {{"latch", true}}), "observer certificate");
  EXPECT_EQ(KernelMutations(), 0u);
}

// Issue 48: a frame nested 100,000 deep once crashed the agent (a stack
// overflow in the audit writer), from any certificate, before any role
// check: mid-drill it errored the drill, six of them exhausted the
// supervisor's restarts. Now the decoder refuses it by its bytes: that
// connection is closed, the agent serves on, and the drill's fault and
// lease are as they were.
TEST_F(AgentTlsTest, AFrameNestedPastTheLimitFromAnObserverIsRefusedAndTheAgentServesOn) {
  StartServer();
  auto controller = ConnectAs("controller");
  ASSERT_TRUE(Ok(controller->Call("lease", {{"ttl_ms", 60000}})));
  ASSERT_TRUE(Ok(controller->Call("apply", ApplyBody())));
  for (int i = 0; i < 8; ++i) {  // more than the supervisor's restarts
    auto watcher = ConnectAs("watcher");
    // An apply whose params nest 100,000 deep: what the audit writer, which
    // records params before any role check, once recursed into.
    const std::string body = std::string(
                                 "{\"v\":1,\"type\":\"apply\",\"id\":1,\"fault_id\":\"f\",\"kind\":"
                                 "\"link_rate\",\"params\":") +
                             std::string(100000, '[') + std::string(100000, ']') + "}";
    std::string frame(4, '\0');
    const auto n = static_cast<uint32_t>(body.size());
    for (int b = 0; b < 4; ++b) frame[b] = static_cast<char>(n >> (24 - 8 * b));
    ASSERT_FALSE(watcher->Send(frame + body));
    auto reply = watcher->Receive();
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_NE(reply->value("error", "").find("deeper than 64"), std::string::npos) << reply->dump();
    EXPECT_TRUE(watcher->ClosedByPeer());
  }
  auto hello = controller->Call("hello");
  ASSERT_TRUE(Ok(hello));
  EXPECT_EQ((*hello)["active_faults"], 1);
  EXPECT_TRUE(OnAgent([this] { return service_->lease_held(); }));
  ExpectGoodClientServed();
}

TEST_F(AgentTlsTest, RevokedControllerCertificateIsRefused) {
  StartServer();
  auto ctl2 = ConnectAs("ctl2");
  ASSERT_TRUE(Ok(ctl2->Call("hello")));
  auto serial = RevokeCert(pki_.string(), (pki_ / "ctl2.pem").string());
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  // From its next request on, on the open connection too.
  ExpectDenied(ctl2->Call("lease", {{"ttl_ms", 5000}}), "is revoked");
  ExpectDenied(ConnectAs("ctl2")->Call("hello"), "(serial " + *serial + ") is revoked");
  ExpectGoodClientServed();
  EXPECT_EQ(KernelMutations(), 0u);
}

TEST_F(AgentTlsTest, ApplyWithoutALeaseIsRefused) {
  StartServer();
  auto ctl = ConnectAs("controller");
  ExpectDenied(ctl->Call("apply", ApplyBody()), "no drill holds this node's lease");
  ExpectDenied(ctl->Call("workload_start", {{"argv", {"sleep", "1"}}}),
               "no drill holds this node's lease");
  EXPECT_EQ(KernelMutations(), 0u);
  ASSERT_TRUE(Ok(ctl->Call("lease", {{"ttl_ms", 5000}})));
  EXPECT_TRUE(Ok(ctl->Call("apply", ApplyBody())));
}

TEST_F(AgentTlsTest, ASecondControllerIsToldWhoHoldsTheNode) {
  StartServer();
  auto first = ConnectAs("controller");
  ASSERT_TRUE(Ok(first->Call("lease", {{"ttl_ms", 5000}, {"drill", "quickstart@1"}})));
  auto second = ConnectAs("ctl2");
  ExpectDenied(second->Call("lease", {{"ttl_ms", 5000}, {"drill", "other@2"}}),
               "held by CN=controller,OU=controller for drill quickstart@1 until ");
  Json apply = ApplyBody();
  apply["drill"] = "other@2";
  ExpectDenied(second->Call("apply", apply), "held by CN=controller,OU=controller");
  ExpectDenied(second->Call("revert_all", {{"drill", "other@2"}}), "held by");
  ExpectDenied(second->Call("lease", {{"ttl_ms", 0}, {"drill", "other@2"}}), "belongs to");
  // The same certificate for another drill is another owner.
  auto again = ConnectAs("controller");
  ExpectDenied(again->Call("lease", {{"ttl_ms", 5000}, {"drill", "other@2"}}), "held by");
  EXPECT_EQ(KernelMutations(), 0u);
  apply["drill"] = "quickstart@1";
  EXPECT_TRUE(Ok(first->Call("apply", apply)));
}

TEST_F(AgentTlsTest, ApplyOutsideTheLeaseLimitsIsRefused) {
  StartServer();
  auto ctl = ConnectAs("controller");
  ASSERT_TRUE(Ok(ctl->Call(
      "lease",
      {{"ttl_ms", 5000},
       {"limits", {{"kinds", {"link_rate"}}, {"targets", {"fab0"}}, {"max_faults", 1}}}})));
  ExpectDenied(
      ctl->Call("apply",
                {{"fault_id", "down"}, {"kind", "link_down"}, {"params", {{"interface", "fab0"}}}}),
      "allows only link_rate");
  Json other_target = ApplyBody();
  other_target["params"]["interface"] = "fab1";
  ExpectDenied(ctl->Call("apply", other_target), "allows only targets fab0");
  EXPECT_EQ(KernelMutations(), 0u);
  ASSERT_TRUE(Ok(ctl->Call("apply", ApplyBody())));
  Json second = ApplyBody();
  second["fault_id"] = "slow2";
  ExpectDenied(ctl->Call("apply", second), "allows 1 at once");
}

TEST_F(AgentTlsTest, TheAgentsOwnPolicyIsNotWidenedByALease) {
  configure_ = [](AgentConfig& c) {
    c.deny_kinds = {"link_rate"};
    c.deny_targets = {"fab1"};
  };
  StartServer();
  auto ctl = ConnectAs("controller");
  ASSERT_TRUE(Ok(ctl->Call("lease", {{"ttl_ms", 5000}, {"limits", {{"kinds", {"link_rate"}}}}})));
  ExpectDenied(ctl->Call("apply", ApplyBody()), "this agent's policy does not allow the kind");
  ExpectDenied(
      ctl->Call("apply",
                {{"fault_id", "down"}, {"kind", "link_down"}, {"params", {{"interface", "fab1"}}}}),
      "policy denies the target");
  EXPECT_EQ(KernelMutations(), 0u);
}

TEST_F(AgentTlsTest, ThePathToTheControllerIsGuardedByItsRoute) {
  kernel_.routes["127.0.0.1"] = "fab0";  // the controller is reached over fab0 here
  StartServer();
  auto ctl = ConnectAs("controller");
  ASSERT_TRUE(Ok(ctl->Call("lease", {{"ttl_ms", 5000}})));
  ExpectDenied(ctl->Call("apply", ApplyBody()), "fab0 carries this agent's management path");
  ExpectDenied(ctl->Call("check", {{"faults", {ApplyBody()}}}), "management path");
  ExpectDenied(ctl->Call("apply", {{"fault_id", "cut"},
                                   {"kind", "link_partition"},
                                   {"params", {{"peers", {"127.0.0.1"}}}}}),
               "127.0.0.1, the controller's address");
  EXPECT_EQ(KernelMutations(), 0u);
}

TEST_F(AgentTlsTest, PanicLatchesTheAgentUntilClearedAcrossARestart) {
  StartServer();
  {
    auto ctl = ConnectAs("controller");
    ASSERT_TRUE(Ok(ctl->Call("lease", {{"ttl_ms", 5000}, {"drill", "d1"}})));
    Json apply = ApplyBody();
    apply["drill"] = "d1";
    ASSERT_TRUE(Ok(ctl->Call("apply", apply)));
    // Another controller's panic needs no lease, and wins.
    auto ops = ConnectAs("ctl2");
    ASSERT_TRUE(Ok(ops->Call("revert_all", {{"latch", true}, {"reason", "fdrill panic by ops"}})));
    EXPECT_EQ(kernel_.ifaces["fab0"].qdisc_kind, "noqueue");
    ExpectDenied(ctl->Call("lease", {{"ttl_ms", 5000}, {"drill", "d1"}}),
                 "`fdrill panic` latched this node");
    ExpectDenied(ctl->Call("apply", apply), "latched");
  }
  StopServer();
  // A restarted agent: a new service on the same state directory.
  AgentConfig config = TestAgentConfig("n1", dir_ / "state");
  AgentService restarted(config, Host{&kernel_, nullptr}, clock_);
  const Caller ctl{.peer = "127.0.0.1:1",
                   .subject = kController,
                   .role = "controller",
                   .serial = "1",
                   .tls = true};
  auto call = [&](const std::string& type, Json body = Json::object()) -> Result<Json> {
    return restarted.Handle(MakeRequest(type, 1, std::move(body)), ctl);
  };
  Result<Json> hello = call("hello");
  ASSERT_TRUE(Ok(hello));
  EXPECT_EQ((*hello)["panic"]["reason"], "fdrill panic by ops") << hello->dump();
  ExpectDenied(call("lease", {{"ttl_ms", 5000}}), "fdrill panic --clear");
  ASSERT_TRUE(Ok(call("panic_clear")));
  EXPECT_TRUE(Ok(call("lease", {{"ttl_ms", 5000}})));
}

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

// The controller's side: AgentLink over TLS.
class AgentLinkTlsTest : public AgentTlsTest {
 protected:
  void SetUp() override {
    AgentTlsTest::SetUp();
    work_.emplace(link_io_.get_executor());
    link_thread_ = std::thread([this] { link_io_.run(); });
  }
  void TearDown() override {
    work_.reset();
    link_io_.stop();
    link_thread_.join();
    AgentTlsTest::TearDown();
  }
  std::unique_ptr<AgentLink> Link(const std::string& node, const TlsConfig* tls) {
    return std::make_unique<AgentLink>(link_io_, node, "127.0.0.1", port_, tls);
  }
  // What Connect says of a link to NODE that presents NAME's cert from PKI
  // and trusts PKI's CA.
  Status ConnectAs(const std::string& node, const fs::path& pki, const std::string& name) {
    TlsConfig tls = TlsConfig::InDir(pki.string(), name);
    return Link(node, &tls)->Connect(kWait);
  }

  asio::io_context link_io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread link_thread_;
};

TEST_F(AgentLinkTlsTest, LinkWithTheControllerCertTalksToTheAgent) {
  StartServer();
  TlsConfig tls = TlsConfig::InDir(pki_.string(), "controller");
  auto link = Link("n1", &tls);
  ASSERT_TRUE(link->Connect(kWait).ok());
  auto hello = link->Call("hello", {}, kWait);
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
  EXPECT_EQ((*hello)["node"], "n1");
  link->Close();
  EXPECT_EQ(AuditSubjects(), (std::vector<std::string>{kController}));
}

// A real cluster's hosts file names its nodes: the link resolves the name
// (here through /etc/hosts: no DNS query leaves the machine).
TEST_F(AgentLinkTlsTest, ANodeNamedByHostNameIsResolved) {
  StartServer();
  TlsConfig tls = TlsConfig::InDir(pki_.string(), "controller");
  AgentLink link(link_io_, "n1", "localhost", port_, &tls);
  Status st = link.Connect(kWait);
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto hello = link.Call("hello", {}, kWait);
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
  EXPECT_EQ((*hello)["node"], "n1");
  link.Close();
}

TEST_F(AgentLinkTlsTest, AnAgentWhoseCertNamesAnotherNodeIsRefused) {
  StartServer();  // serves as n1
  Status st = ConnectAs("n2", pki_, "controller");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("agent n2"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("TLS handshake failed"), std::string::npos) << st.message();
}

TEST_F(AgentLinkTlsTest, AnAgentFromAnotherCaIsRefused) {
  StartServer();
  // The controller trusts only the other CA: the agent's cert does not chain.
  Status st = ConnectAs("n1", other_pki_, "controller");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("certificate verify failed"), std::string::npos) << st.message();
  ExpectOnlyTheControllerGotIn();
}

TEST_F(AgentLinkTlsTest, PlaintextLinkToATlsAgentGetsNoReply) {
  StartServer();
  auto link = Link("n1", nullptr);
  ASSERT_TRUE(link->Connect(kWait).ok());
  auto hello = link->Call("hello", {}, kWait);
  EXPECT_FALSE(hello.ok());
  EXPECT_TRUE(AuditSubjects().empty());
}

TEST_F(AgentLinkTlsTest, MissingControllerKeyIsNamed) {
  StartServer();
  Status st = ConnectAs("n1", pki_, "nobody");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find((pki_ / "nobody.pem").string()), std::string::npos) << st.message();
}

// The fan-out primitive (issue 9): one thread keeps many requests in flight
// over two links that share one TLS context; every reply lands once.
TEST_F(AgentLinkTlsTest, CallAsyncKeepsManyRequestsInFlight) {
  StartServer();
  TlsConfig tls = TlsConfig::InDir(pki_.string(), "controller");
  auto a = Link("n1", &tls);
  auto b = Link("n1", &tls);
  ASSERT_TRUE(a->Connect(kWait).ok());
  ASSERT_TRUE(b->Connect(kWait).ok());
  constexpr int kEach = 50;
  std::mutex mu;
  std::condition_variable cv;
  int ok = 0, done = 0;
  for (int i = 0; i < kEach; ++i) {
    for (auto* link : {a.get(), b.get()}) {
      link->CallAsync("hello", {}, [&](Result<Json> r) {
        std::lock_guard<std::mutex> lock(mu);
        if (r.ok() && (*r)["node"] == "n1") ++ok;
        ++done;
        cv.notify_one();
      });
    }
  }
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return done == 2 * kEach; })) << done;
  EXPECT_EQ(ok, 2 * kEach);
}

TEST_F(AgentLinkTlsTest, CallAsyncOnADroppedLinkRepliesUnavailableAtOnce) {
  StartServer();
  TlsConfig tls = TlsConfig::InDir(pki_.string(), "controller");
  auto link = Link("n1", &tls);
  ASSERT_TRUE(link->Connect(kWait).ok());
  link->Close();
  // Close is posted to the io thread; a Call after it has run fails fast.
  for (int i = 0; i < 100 && link->Call("hello", {}, kWait).ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::optional<Status> got;
  link->CallAsync("hello", {}, [&](Result<Json> r) { got = r.status(); });
  ASSERT_TRUE(got.has_value());  // called before CallAsync returned
  EXPECT_EQ(got->code(), StatusCode::kUnavailable);
}

// A frame many TLS records long both ways: the link writes it through
// OpenSSL's partial progress on a non-blocking socket and reads it back in
// pieces (harness/tls/tls_socket.h).
TEST_F(AgentLinkTlsTest, AFrameOfManyRecordsCrossesTheLinkWhole) {
  StartServer();
  TlsConfig tls = TlsConfig::InDir(pki_.string(), "controller");
  auto link = Link("n1", &tls);
  ASSERT_TRUE(link->Connect(kWait).ok());
  // An unknown request type is answered with an error naming it: the reply
  // carries the 600 KiB type back.
  const std::string big(600 * 1024, 'x');
  auto reply = link->Call(big, {}, kWait);
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find(big), std::string::npos)
      << reply.status().message().substr(0, 200);
  auto hello = link->Call("hello", {}, kWait);
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
}

// TlsSocket::Buffered, which AgentLink's reader trusts to wait for the
// socket instead of reading it to its EAGAIN: records OpenSSL read ahead of
// the caller are "buffered" until Read has returned them all.
TEST_F(AgentTlsTest, TlsSocketSaysWhileOpenSslHoldsUnreadRecords) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  for (int fd : fds) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  auto server_ctx = MakeServerContext(TlsConfig::InDir(pki_.string(), "n1"));
  auto client_ctx = MakeClientContext(TlsConfig::InDir(pki_.string(), "controller"));
  ASSERT_TRUE(server_ctx.ok() && client_ctx.ok());
  SSL* server = SSL_new((*server_ctx)->native_handle());
  SSL_set_fd(server, fds[1]);
  SSL_set_accept_state(server);
  {
    TlsSocket client((*client_ctx)->native_handle(), "n1", fds[0]);
    ASSERT_TRUE(client.status().ok()) << client.status().ToString();
    bool client_done = false, server_done = false;
    for (int i = 0; i < 100 && !(client_done && server_done); ++i) {
      if (!client_done) {
        auto o = client.Handshake();
        ASSERT_NE(o.state, TlsSocket::State::kFailed) << o.error;
        client_done = o.state == TlsSocket::State::kDone;
      }
      if (!server_done) server_done = SSL_do_handshake(server) == 1;
    }
    ASSERT_TRUE(client_done && server_done);
    for (const char* word : {"one", "two", "three"})  // a record each
      ASSERT_EQ(SSL_write(server, word, static_cast<int>(strlen(word))),
                static_cast<int>(strlen(word)));
    char buf[64];
    std::vector<std::string> got;
    std::vector<bool> buffered;
    for (;;) {
      auto o = client.Read(buf, sizeof buf);
      if (o.state != TlsSocket::State::kDone) {
        EXPECT_EQ(o.state, TlsSocket::State::kWantRead);
        break;
      }
      got.emplace_back(buf, o.bytes);
      buffered.push_back(client.Buffered());
    }
    EXPECT_EQ(got, (std::vector<std::string>{"one", "two", "three"}));
    EXPECT_EQ(buffered, (std::vector<bool>{true, true, false}));
    EXPECT_FALSE(client.Buffered());
  }
  SSL_free(server);
  close(fds[0]);
  close(fds[1]);
}

// Something that accepts TCP connections and never says a word: an agent
// that hangs in its handshake.
class SilentListener {
 public:
  SilentListener()
      : acceptor_(io_, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    Accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~SilentListener() {
    io_.stop();
    thread_.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  void Accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, asio::ip::tcp::socket s) {
      if (ec) return;
      held_.push_back(std::move(s));
      Accept();
    });
  }
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  std::vector<asio::ip::tcp::socket> held_;
  std::thread thread_;
};

// Dials go out together: an agent stuck in its handshake, dialled first,
// costs its own deadline and does not hold up the one dialled after it.
TEST_F(AgentLinkTlsTest, AStuckAgentDoesNotHoldUpTheNextDial) {
  StartServer();
  SilentListener silent;
  TlsConfig tls = TlsConfig::InDir(pki_.string(), "controller");
  AgentLink stuck(link_io_, "n1", "127.0.0.1", silent.port(), &tls);
  auto good = Link("n1", &tls);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<std::string, Status>> order;
  auto record = [&](std::string who) {
    return [&, who](Status s) {
      std::lock_guard<std::mutex> lock(mu);
      order.emplace_back(who, s);
      cv.notify_one();
    };
  };
  stuck.ConnectAsync(std::chrono::seconds(2), record("stuck"));
  good->ConnectAsync(kWait, record("good"));
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return order.size() == 2; }));
  EXPECT_EQ(order[0].first, "good");
  EXPECT_TRUE(order[0].second.ok()) << order[0].second.ToString();
  EXPECT_EQ(order[1].first, "stuck");
  EXPECT_NE(order[1].second.message().find("no TLS handshake within 2s"), std::string::npos)
      << order[1].second.ToString();
}

// ConnectAll: one Status per link in order, through a window smaller than
// the number of links; the failures are the links that failed.
TEST_F(AgentLinkTlsTest, ConnectAllAnswersForEveryLinkInOrder) {
  StartServer();
  SilentListener silent;
  TlsConfig tls = TlsConfig::InDir(pki_.string(), "controller");
  std::vector<std::unique_ptr<AgentLink>> links;
  for (int i = 0; i < 6; ++i) links.push_back(Link("n1", &tls));
  links.push_back(std::make_unique<AgentLink>(link_io_, "n1", "127.0.0.1", silent.port(), &tls));
  links.push_back(Link("n2", &tls));  // the agent is n1: its cert names another node
  std::vector<AgentLink*> raw;
  for (auto& l : links) raw.push_back(l.get());
  auto got = ConnectAll(raw, std::chrono::seconds(1), /*window=*/3);
  ASSERT_EQ(got.size(), links.size());
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(got[i].ok()) << i << ": " << got[i].ToString();
    auto hello = links[i]->Call("hello", {}, kWait);
    EXPECT_TRUE(hello.ok()) << i << ": " << hello.status().ToString();
  }
  EXPECT_NE(got[6].message().find("no TLS handshake within"), std::string::npos)
      << got[6].ToString();
  EXPECT_NE(got[7].message().find("TLS handshake failed"), std::string::npos) << got[7].ToString();
  EXPECT_NE(got[7].message().find("agent n2"), std::string::npos) << got[7].ToString();
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

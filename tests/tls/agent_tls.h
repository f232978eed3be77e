// What the agent's TLS tests share: a real AgentServer with a real
// AgentService (over the fake kernel) on 127.0.0.1, and a blocking client.
//
// Client        one connection, TLS over the context it is given or plain
//               TCP (nullptr), its own io_context; every operation gives up
//               after kWait, so a misbehaving server fails the test instead
//               of hanging it.
// AgentTlsTest  a CA with certs for nodes n1 and n2, controllers
//               "controller" and "ctl2", observer "watcher", and a second CA
//               with its own "controller"; StartServer runs the agent for n1
//               on a thread of its own, OnAgent runs code there (the service
//               is single-threaded), and the Expect* helpers hold what every
//               refused client must leave: the agent serving on, the audit
//               log holding only the good controller's subject, the kernel
//               untouched.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include "agents/agent_service.h"
#include "agents/server.h"
#include "common/tls/certs.h"
#include "common/tls/tls_context.h"
#include "tests/agents/test_agent.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_net.h"
#include "tests/support/json_lines.h"
#include "tests/support/scratch_dir.h"

namespace fdrill::tls_test {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace fs = std::filesystem;
using asio::ip::tcp;
using TlsStream = ssl::stream<tcp::socket>;
using Error = boost::system::error_code;

inline constexpr auto kWait = std::chrono::seconds(5);
inline constexpr char kController[] = "CN=controller,OU=controller";

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

}  // namespace fdrill::tls_test

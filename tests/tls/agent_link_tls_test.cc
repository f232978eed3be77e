// The controller's side of mutual TLS (AgentLink, ConnectAll) against a
// real agent in the same process (tests/tls/agent_tls.h): the right cert
// talks, a wrong node, CA or key is refused naming it, many requests stay
// in flight, a frame of many records crosses whole, a stuck agent holds up
// no other dial; and TlsSocket::Buffered, which the link's reader trusts.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include "common/tls/tls_socket.h"
#include "harness/controller/agent_link.h"
#include "harness/controller/connect_all.h"
#include "tests/tls/agent_tls.h"

namespace fdrill {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using tls_test::AgentTlsTest;
using tls_test::kController;
using tls_test::kWait;

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
// pieces (common/tls/tls_socket.h).
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

}  // namespace
}  // namespace fdrill

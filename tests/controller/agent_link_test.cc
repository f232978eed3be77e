// AgentLink against an in-process agent on loopback (tests/fakes/
// loopback_agent.h), plaintext: the request's envelope and the drill id it
// is stamped with, replies and refusals, pushes, a reply that never comes,
// a frame the decoder refuses, the agent dropping the connection, and
// Reconnect to an agent started again on the same port. No root, no TLS.
#include "harness/controller/agent_link.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/wire/protocol.h"
#include "tests/fakes/loopback_agent.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// What a link's callbacks saw, on the io thread; the test waits on it.
struct LinkSeen {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Json> pushes;
  std::vector<std::string> drops;

  template <typename Pred>
  bool Await(Pred p) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, seconds(10), p);
  }
};

class AgentLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(agent_.Listen().ok());
    io_thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    link_.reset();
    work_.reset();
    io_.stop();
    io_thread_.join();
  }
  // A link to the agent, its callbacks recording into seen_.
  AgentLink& Link(uint16_t port = 0) {
    link_ =
        std::make_unique<AgentLink>(io_, "n1", "127.0.0.1", port ? port : agent_.port(), nullptr);
    link_->set_on_push([this](const Json& m) {
      std::lock_guard<std::mutex> lock(seen_.mu);
      seen_.pushes.push_back(m);
      seen_.cv.notify_all();
    });
    link_->set_on_drop([this](const std::string& why) {
      std::lock_guard<std::mutex> lock(seen_.mu);
      seen_.drops.push_back(why);
      seen_.cv.notify_all();
    });
    return *link_;
  }

  LoopbackAgent agent_{"n1"};
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io_.get_executor()};
  std::thread io_thread_;
  std::unique_ptr<AgentLink> link_;
  LinkSeen seen_;
};

// A request carries the wire envelope (v, type, an id > 0) and its body;
// set_drill stamps every request's body with the drill, unless the body
// names its own; the reply comes back whole.
TEST_F(AgentLinkTest, ACallCarriesItsEnvelopeAndTheDrillAndReturnsTheReply) {
  AgentLink& link = Link();
  ASSERT_TRUE(link.Connect(seconds(5)).ok());
  EXPECT_TRUE(link.connected());
  EXPECT_EQ(link.address(), "127.0.0.1:" + std::to_string(agent_.port()));
  link.set_drill("quickstart@1");
  auto hello = link.Call(proto::kHello, Json::object(), seconds(5));
  ASSERT_TRUE(hello.ok()) << hello.status().message();
  EXPECT_EQ(hello->value(proto::key::kNode, ""), "n1");
  EXPECT_TRUE(hello->value("ok", false));
  auto lease = link.Call(proto::kLease, {{proto::key::kDrill, "other@2"}}, seconds(5));
  ASSERT_TRUE(lease.ok());

  const std::vector<Json> sent = agent_.Requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0]["v"], kWireVersion);
  EXPECT_EQ(sent[0]["type"], "hello");
  EXPECT_GT(sent[0]["id"].get<uint64_t>(), 0u);
  EXPECT_NE(sent[1]["id"], sent[0]["id"]);
  EXPECT_EQ(sent[0][proto::key::kDrill], "quickstart@1");
  EXPECT_EQ(sent[1][proto::key::kDrill], "other@2");
}

// An agent's refusal ({ok: false, code, error}) is the call's Status, its
// code and message as the agent gave them.
TEST_F(AgentLinkTest, ARefusalComesBackAsItsStatus) {
  agent_.set_answer([](const Json&) -> std::optional<Result<Json>> {
    return Status(FailedPrecondition("link_rate: no interface fab9 on n1"));
  });
  AgentLink& link = Link();
  ASSERT_TRUE(link.Connect(seconds(5)).ok());
  auto r = link.Call(proto::kCheck, Json::object(), seconds(5));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(), "link_rate: no interface fab9 on n1");
}

// A message with id 0 is a push: it goes to on_push, never to a caller.
TEST_F(AgentLinkTest, PushesGoToOnPush) {
  AgentLink& link = Link();
  ASSERT_TRUE(link.Connect(seconds(5)).ok());
  ASSERT_TRUE(link.Call(proto::kHello, {}, seconds(5)).ok());  // the session is up on both ends
  agent_.Push(proto::kFaultExpired, {{proto::key::kFaultId, "cap"}});
  ASSERT_TRUE(seen_.Await([&] { return !seen_.pushes.empty(); }));
  EXPECT_EQ(seen_.pushes[0]["type"], "fault_expired");
  EXPECT_EQ(seen_.pushes[0][proto::key::kFaultId], "cap");
  EXPECT_TRUE(seen_.drops.empty());
}

// No reply by the deadline: DeadlineExceeded naming the agent and the
// request; the reply that comes later is dropped, and the link still
// serves the next call.
TEST_F(AgentLinkTest, AReplyThatNeverComesIsADeadlineAndTheLinkGoesOn) {
  agent_.set_answer([this](const Json& req) -> std::optional<Result<Json>> {
    if (RequestType(req) == proto::kSnapshot) return std::nullopt;
    return agent_.DefaultAnswer(req);
  });
  AgentLink& link = Link();
  ASSERT_TRUE(link.Connect(seconds(5)).ok());
  auto r = link.Call(proto::kSnapshot, {}, milliseconds(50));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("agent n1: no reply to snapshot within"), std::string::npos)
      << r.status().message();
  // The late reply to the snapshot, then the answer to a new call: the
  // late one reaches nobody.
  const uint64_t late = RequestId(agent_.RequestsOf(proto::kSnapshot).front());
  agent_.SendRaw(EncodeFrame(MakeReply(late, {{"late", true}})));
  auto next = link.Call(proto::kInventory, {}, seconds(5));
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_FALSE(next->contains("late"));
  EXPECT_TRUE(link.connected());
}

// CallAsync's answer after Forget goes nowhere: the callback never runs,
// even when the reply arrives.
TEST_F(AgentLinkTest, AForgottenCallIsNeverAnswered) {
  agent_.set_answer([this](const Json& req) -> std::optional<Result<Json>> {
    if (RequestType(req) == proto::kSnapshot) return std::nullopt;
    return agent_.DefaultAnswer(req);
  });
  AgentLink& link = Link();
  ASSERT_TRUE(link.Connect(seconds(5)).ok());
  std::atomic<int> answered{0};
  const uint64_t id = link.CallAsync(proto::kSnapshot, {}, [&](Result<Json>) { ++answered; });
  ASSERT_TRUE(agent_.AwaitRequests(proto::kSnapshot, 1));
  link.Forget(id);
  agent_.SendRaw(EncodeFrame(MakeReply(RequestId(agent_.RequestsOf(proto::kSnapshot)[0]))));
  // Replies are read in order: once this one is back, the forgotten one was read.
  ASSERT_TRUE(link.Call(proto::kInventory, {}, seconds(5)).ok());
  EXPECT_EQ(answered, 0);
}

// A body larger than a read and a socket buffer arrives whole, both ways.
TEST_F(AgentLinkTest, ALargeBodyArrivesWhole) {
  agent_.set_answer([](const Json& req) -> std::optional<Result<Json>> {
    return Json{{"echo", req["blob"]}};
  });
  AgentLink& link = Link();
  ASSERT_TRUE(link.Connect(seconds(5)).ok());
  std::string blob(3 << 20, 'x');
  for (size_t i = 0; i < blob.size(); i += 4093) blob[i] = static_cast<char>('a' + i % 26);
  auto r = link.Call(proto::kInventory, {{"blob", blob}}, seconds(20));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["echo"].get<std::string>(), blob);
}

// A frame the decoder refuses (longer than kMaxFrameBytes) ends the link:
// on_drop says why, the call in flight fails as lost.
TEST_F(AgentLinkTest, AFrameTooLongDropsTheLink) {
  agent_.set_answer([](const Json&) -> std::optional<Result<Json>> { return std::nullopt; });
  AgentLink& link = Link();
  ASSERT_TRUE(link.Connect(seconds(5)).ok());
  Result<Json> in_flight = Internal("not answered");
  std::atomic<bool> done{false};
  link.CallAsync(proto::kSnapshot, {}, [&](Result<Json> r) {
    in_flight = std::move(r);
    done = true;
    std::lock_guard<std::mutex> lock(seen_.mu);
    seen_.cv.notify_all();
  });
  ASSERT_TRUE(agent_.AwaitRequests(proto::kSnapshot, 1));
  const uint32_t n = kMaxFrameBytes + 1;
  agent_.SendRaw(std::string{static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                             static_cast<char>(n >> 8), static_cast<char>(n)});
  ASSERT_TRUE(seen_.Await([&] { return !seen_.drops.empty() && done; }));
  EXPECT_EQ(seen_.drops.size(), 1u);
  EXPECT_NE(seen_.drops[0].find("frame of " + std::to_string(n) + " bytes refused"),
            std::string::npos)
      << seen_.drops[0];
  EXPECT_FALSE(link.connected());
  ASSERT_FALSE(in_flight.ok());
  EXPECT_EQ(in_flight.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(in_flight.status().message().find("agent n1 at 127.0.0.1:"), std::string::npos);
  EXPECT_NE(in_flight.status().message().find("connection lost"), std::string::npos);
}

// The agent goes away: on_drop once, calls fail at once; Reconnect while
// it is down fails, once it listens again on the same port it succeeds,
// and pushes and calls go over the new connection.
TEST_F(AgentLinkTest, ADroppedLinkReconnectsToTheRestartedAgent) {
  AgentLink& link = Link();
  ASSERT_TRUE(link.Connect(seconds(5)).ok());
  ASSERT_TRUE(link.Call(proto::kHello, {}, seconds(5)).ok());  // the agent has its end
  EXPECT_EQ(link.Reconnect(seconds(1)).code(), StatusCode::kFailedPrecondition);
  const uint16_t port = agent_.port();
  agent_.Stop();
  ASSERT_TRUE(seen_.Await([&] { return !seen_.drops.empty(); }));
  EXPECT_FALSE(link.connected());
  auto r = link.Call(proto::kHello, {}, seconds(5));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  Status down = link.Reconnect(seconds(1));
  EXPECT_EQ(down.code(), StatusCode::kUnavailable);
  EXPECT_NE(down.message().find("does not answer"), std::string::npos) << down.message();

  ASSERT_TRUE(agent_.Listen(port).ok());
  ASSERT_TRUE(link.Reconnect(seconds(5)).ok());
  EXPECT_TRUE(link.connected());
  auto hello = link.Call(proto::kHello, {}, seconds(5));
  ASSERT_TRUE(hello.ok()) << hello.status().message();
  EXPECT_EQ(agent_.accepted(), 2);  // answered, so accepted
  agent_.Push(proto::kLeaseExpired, Json::object());
  ASSERT_TRUE(seen_.Await([&] { return !seen_.pushes.empty(); }));
  EXPECT_EQ(seen_.pushes[0]["type"], "lease_expired");
  EXPECT_EQ(seen_.drops.size(), 1u);
}

// Nobody listens: Connect's error names the node, the address and the
// deadline's or the kernel's reason.
TEST_F(AgentLinkTest, NobodyListeningIsAnErrorNamingTheAgent) {
  const uint16_t port = agent_.port();
  agent_.Stop();
  AgentLink& link = Link(port);
  Status st = link.Connect(seconds(2));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("agent n1 at 127.0.0.1:" + std::to_string(port) + " does not answer"),
            std::string::npos)
      << st.message();
  EXPECT_FALSE(link.Call(proto::kHello, {}, milliseconds(100)).ok());
}

// Close is the controller's own end: on_drop is told so, and a second
// Close does nothing.
TEST_F(AgentLinkTest, CloseDropsOnceSayingWhy) {
  AgentLink& link = Link();
  ASSERT_TRUE(link.Connect(seconds(5)).ok());
  link.Close();
  ASSERT_TRUE(seen_.Await([&] { return !seen_.drops.empty(); }));
  link.Close();
  ASSERT_TRUE(link.Call(proto::kHello, {}, seconds(1)).status().code() == StatusCode::kUnavailable);
  std::lock_guard<std::mutex> lock(seen_.mu);
  EXPECT_EQ(seen_.drops, (std::vector<std::string>{"closed by the controller"}));
}

}  // namespace
}  // namespace fdrill

// The commands that reach every agent outside a drill — ConnectAll,
// ForEachAgent and `fdrill panic` (PanicAll, PanicClearAll) — against
// in-process agents on loopback (tests/fakes/loopback_agent.h): one result
// per agent in the order given, an agent that does not answer its own
// error while the rest still run, a window of one still dialling everyone,
// and what panic asks of each agent and reports back. Plaintext, no root.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/wire/protocol.h"
#include "harness/controller/agent_set.h"
#include "harness/controller/connect_all.h"
#include "harness/controller/panic.h"
#include "tests/fakes/loopback_agent.h"

namespace fdrill {
namespace {

using std::chrono::seconds;

class AgentFleetTest : public ::testing::Test {
 protected:
  // `count` agents n0.. on loopback; `down` of them stopped (they do not answer).
  void Fleet(int count, std::vector<int> down = {}) {
    for (int i = 0; i < count; ++i) {
      fakes_.push_back(std::make_unique<LoopbackAgent>("n" + std::to_string(i)));
      ASSERT_TRUE(fakes_.back()->Listen().ok());
      addresses_.push_back({fakes_.back()->node(), "127.0.0.1", fakes_.back()->port()});
    }
    for (int i : down) fakes_[i]->Stop();
  }

  std::vector<std::unique_ptr<LoopbackAgent>> fakes_;
  std::vector<AgentAddress> addresses_;
};

// ConnectAll dials every link, a window at a time; a dead agent is its own
// error in its place.
TEST_F(AgentFleetTest, ConnectAllGivesEachLinkItsOwnStatusInOrder) {
  Fleet(4, {2});
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });
  for (size_t window : {size_t{1}, kConnectWindow}) {
    std::vector<std::unique_ptr<AgentLink>> links;
    std::vector<AgentLink*> raw;
    for (const AgentAddress& a : addresses_) {
      links.push_back(std::make_unique<AgentLink>(io, a.node, a.host, a.port, nullptr));
      raw.push_back(links.back().get());
    }
    const std::vector<Status> st = ConnectAll(raw, seconds(5), window);
    ASSERT_EQ(st.size(), 4u);
    EXPECT_TRUE(st[0].ok()) << st[0].message();
    EXPECT_TRUE(st[1].ok()) << st[1].message();
    EXPECT_EQ(st[2].code(), StatusCode::kUnavailable);
    EXPECT_NE(st[2].message().find("agent n2 at 127.0.0.1:"), std::string::npos) << st[2].message();
    EXPECT_TRUE(st[3].ok()) << st[3].message();
    EXPECT_TRUE(links[3]->connected());
  }
  EXPECT_TRUE(fakes_[0]->AwaitAccepted(2));  // once per round
  EXPECT_EQ(fakes_[0]->accepted(), 2);
  work.reset();
  io.stop();
  io_thread.join();
}

// ForEachAgent runs the job on each agent that answers, in input order; the
// one that does not is its own error, the others still run.
TEST_F(AgentFleetTest, ForEachAgentRunsTheJobOnEveryAgentThatAnswers) {
  Fleet(3, {1});
  auto results = ForEachAgent(addresses_, nullptr, seconds(5), [](AgentLink& link) {
    return link.Call(proto::kInventory, {}, seconds(5));
  });
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok());
  EXPECT_FALSE(results[1].ok());
  EXPECT_NE(results[1].status().message().find("agent n1"), std::string::npos);
  EXPECT_TRUE(results[2].ok());
  EXPECT_EQ(fakes_[0]->Types(), (std::vector<std::string>{"inventory"}));
  EXPECT_EQ(fakes_[2]->Types(), (std::vector<std::string>{"inventory"}));
  // inventory.json of what they said.
  const Json cluster = ClusterInventory({"n0", "n1", "n2"}, results);
  EXPECT_TRUE(cluster["nodes"][1].contains("error"));
  EXPECT_EQ(cluster["nodes"][2]["node"], "n2");
}

// Panic: every agent is asked to revert everything and latch, with the
// reason; each outcome names its agent, a latch the agent could not write
// is passed on, and an agent that does not answer is reported while the
// others still revert.
TEST_F(AgentFleetTest, PanicRevertsAndLatchesEveryAgentThatAnswers) {
  Fleet(3, {2});
  fakes_[1]->set_answer([](const Json& req) -> std::optional<Result<Json>> {
    if (RequestType(req) != proto::kRevertAll) return Json::object();
    return Json{{"reverted", true}, {proto::key::kLatchError, "/var/lib/fdrill: read-only"}};
  });
  const auto outcomes = PanicAll(addresses_, nullptr, seconds(5), "fdrill panic by root@ctl");
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(outcomes[0].node, "n0");
  EXPECT_TRUE(outcomes[0].status.ok());
  EXPECT_EQ(outcomes[0].latch_error, "");
  EXPECT_TRUE(outcomes[1].status.ok());
  EXPECT_EQ(outcomes[1].latch_error, "/var/lib/fdrill: read-only");
  EXPECT_EQ(outcomes[2].node, "n2");
  EXPECT_EQ(outcomes[2].status.code(), StatusCode::kUnavailable);
  for (int i : {0, 1}) {
    const auto reverts = fakes_[i]->RequestsOf(proto::kRevertAll);
    ASSERT_EQ(reverts.size(), 1u);
    EXPECT_EQ(reverts[0][proto::key::kLatch], true);
    EXPECT_EQ(reverts[0][proto::key::kReason], "fdrill panic by root@ctl");
  }
}

// An agent that refuses the panic is reported with its reason.
TEST_F(AgentFleetTest, APanicRefusedIsReportedWithItsReason) {
  Fleet(1);
  fakes_[0]->set_answer([](const Json&) -> std::optional<Result<Json>> {
    return Status(Internal("tc qdisc del: Operation not permitted"));
  });
  const auto outcomes = PanicAll(addresses_, nullptr, seconds(5), "test");
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].status.code(), StatusCode::kInternal);
  EXPECT_EQ(outcomes[0].status.message(), "tc qdisc del: Operation not permitted");
}

// panic --clear lifts every agent's latch.
TEST_F(AgentFleetTest, PanicClearLiftsEveryLatch) {
  Fleet(2);
  const auto outcomes = PanicClearAll(addresses_, nullptr, seconds(5));
  ASSERT_EQ(outcomes.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(outcomes[i].status.ok());
    EXPECT_EQ(fakes_[i]->Types(), (std::vector<std::string>{"panic_clear"}));
  }
}

}  // namespace
}  // namespace fdrill

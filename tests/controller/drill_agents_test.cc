// DrillAgents against in-process agents on loopback (tests/fakes/
// loopback_agent.h), dialled where DrillTargets say: connect, hello and
// lease in that order with each agent's limits, an agent that is another
// node, the first failure named with how many others failed, a switch the
// targets do not run an agent on, calls that time out, a lost agent given
// back by Reconnect, and the leases released at Shutdown. Plaintext, no
// root.
#include "harness/controller/drill_agents.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/wire/protocol.h"
#include "harness/controller/drill.h"
#include "tests/fakes/loopback_agent.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kTwoNodes[] = R"(name: t
fabric: {emulated: {nodes: 2}}
workload: {size: 4K}
phases:
  - {name: baseline, duration: 1s}
  - name: cut
    duration: 1s
    faults:
      - {id: cap, kind: link_rate, node: n1, params: {interface: fab0, rate: 100mbit}}
  - {name: recovery, duration: 1s}
safety: {lease_ttl: 20s}
)";

class DrillAgentsTest : public ::testing::Test {
 protected:
  // `names` agents listening on loopback, and targets that point at them.
  void Agents(const std::vector<std::string>& names) {
    for (const std::string& n : names) {
      fakes_.push_back(std::make_unique<LoopbackAgent>(n));
      ASSERT_TRUE(fakes_.back()->Listen().ok());
      targets_.nodes.push_back({n, "127.0.0.1", fakes_.back()->port(), "/run/" + n, "", true});
    }
  }
  void Load(const std::string& yaml) {
    auto s = ParseScenario(yaml, "drill.yaml");
    ASSERT_TRUE(s.ok()) << s.status().message();
    s_ = std::move(s).value();
  }
  Status Connect() {
    agents_ = std::make_unique<DrillAgents>(s_, targets_, clock_);
    return agents_->Connect(
        opt_, "t@1",
        [this](const NodeLink& n, const Json& m) {
          std::lock_guard<std::mutex> lock(mu_);
          pushes_.push_back(n.name + ":" + m.value("type", ""));
          cv_.notify_all();
        },
        [this](const std::string& node, const std::string& message) {
          std::lock_guard<std::mutex> lock(mu_);
          lost_.push_back(node + ": " + message);
          cv_.notify_all();
        });
  }
  template <typename Pred>
  bool Await(Pred p) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, seconds(10), p);
  }

  void SetUp() override { opt_.insecure = true; }

  RealClock clock_;
  Scenario s_;
  DrillOptions opt_;
  DrillTargets targets_;
  std::vector<std::unique_ptr<LoopbackAgent>> fakes_;
  std::unique_ptr<DrillAgents> agents_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> pushes_;
  std::vector<std::string> lost_;
};

// Each agent is dialled, asked hello, then leased for this drill with the
// limits of its own faults; what hello said is its facts. Shutdown
// releases every lease (ttl 0, no limits).
TEST_F(DrillAgentsTest, ConnectHellosThenLeasesEachAgentWithItsLimits) {
  Agents({"n0", "n1"});
  ASSERT_NO_FATAL_FAILURE(Load(kTwoNodes));
  ASSERT_TRUE(Connect().ok());
  EXPECT_EQ(agents_->Names(), (std::vector<std::string>{"n0", "n1"}));
  ASSERT_EQ(agents_->nodes().size(), 2u);
  EXPECT_EQ(agents_->nodes()[1].address, "127.0.0.1");
  EXPECT_EQ(agents_->nodes()[1].port, fakes_[1]->port());
  const AgentFacts& n1 = agents_->Facts("n1");
  EXPECT_EQ(n1.tmpdir, "/tmp/n1");  // hello's, over the targets' /run/n1
  EXPECT_EQ(n1.hostname, "n1.example");
  // Both clocks are this host's: the offset is the round trip's skew at most.
  EXPECT_LT(std::abs(n1.offset_ns), int64_t{1000000000});

  for (const auto& fake : fakes_) {
    const std::vector<std::string> types = fake->Types();
    ASSERT_GE(types.size(), 2u) << fake->node();
    EXPECT_EQ(types[0], "hello");
    EXPECT_EQ(types[1], "lease");
  }
  const Json lease0 = fakes_[0]->RequestsOf(proto::kLease).front();
  const Json lease1 = fakes_[1]->RequestsOf(proto::kLease).front();
  EXPECT_EQ(lease1[proto::key::kTtlMs], 20000);
  EXPECT_EQ(lease1[proto::key::kDrill], "t@1");
  EXPECT_EQ(lease1[proto::key::kLimits]["kinds"], Json::array({"link_rate"}));
  EXPECT_EQ(lease1[proto::key::kLimits]["max_faults"], 1);
  EXPECT_EQ(lease1[proto::key::kLimits]["max_duration_ms"],
            std::chrono::duration_cast<milliseconds>(s_.phases[1].faults[0].max_duration).count());
  // n0 holds no fault: its lease lets it do nothing.
  EXPECT_EQ(lease0[proto::key::kLimits]["max_faults"], 0);
  EXPECT_TRUE(lease0[proto::key::kLimits]["kinds"].empty());

  agents_->Shutdown();
  for (const auto& fake : fakes_) {
    const Json last = fake->RequestsOf(proto::kLease).back();
    EXPECT_EQ(last[proto::key::kTtlMs], 0) << fake->node();
    EXPECT_FALSE(last.contains(proto::key::kLimits));
  }
  agents_->Shutdown();  // twice is harmless
  EXPECT_TRUE(lost_.empty());
}

// An agent at a node's address that says it is another node is refused
// before any agent is leased.
TEST_F(DrillAgentsTest, AnAgentThatIsAnotherNodeIsRefusedBeforeAnyLease) {
  Agents({"n0", "n1"});
  fakes_[1] = std::make_unique<LoopbackAgent>("n7");
  ASSERT_TRUE(fakes_[1]->Listen().ok());
  targets_.nodes[1].port = fakes_[1]->port();
  ASSERT_NO_FATAL_FAILURE(Load(kTwoNodes));
  Status st = Connect();
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "agent at 127.0.0.1:" + std::to_string(fakes_[1]->port()) +
                              " says it is n7, expected n1");
  for (const auto& fake : fakes_) EXPECT_TRUE(fake->RequestsOf(proto::kLease).empty());
}

// Agents that do not answer: the first in node order in full, then how many
// others failed the same step and which.
TEST_F(DrillAgentsTest, TheFirstFailureIsNamedWithHowManyOthersFailed) {
  Agents({"n0", "n1", "n2"});
  fakes_[0]->Stop();
  fakes_[2]->Stop();
  ASSERT_NO_FATAL_FAILURE(Load(R"(name: t
fabric: {emulated: {nodes: 3}}
workload: {size: 4K}
phases:
  - {name: baseline, duration: 1s}
)"));
  Status st = Connect();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.message().rfind("agent n0 at 127.0.0.1:", 0), 0u) << st.message();
  EXPECT_NE(st.message().find("; and 1 more agent failed the same step: n2"), std::string::npos)
      << st.message();
  EXPECT_TRUE(fakes_[1]->RequestsOf(proto::kLease).empty());
}

// Targets that resolved fewer nodes than the drill has are refused before
// anything is dialled.
TEST_F(DrillAgentsTest, TooFewTargetsAreRefusedBeforeDialling) {
  Agents({"n0"});
  ASSERT_NO_FATAL_FAILURE(Load(kTwoNodes));
  Status st = Connect();
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "drill.yaml: the drill has 2 nodes and only 1 were resolved to agents");
  EXPECT_EQ(fakes_[0]->accepted(), 0);
}

// A fault on a switch the targets hold without an agent (a fabric built by
// an older fdrill), or do not hold at all: the error names the switch and
// the command that builds a fabric that has it.
TEST_F(DrillAgentsTest, ASwitchWithoutAnAgentIsNamed) {
  Agents({"n0", "n1", "n2", "n3"});
  ASSERT_NO_FATAL_FAILURE(Load(R"(name: t
fabric: {emulated: {nodes: 4, leaves: 2}}
topology: emulated
workload: {size: 4K}
phases:
  - {name: baseline, duration: 1s}
  - name: down
    duration: 1s
    faults:
      - {id: leaf, kind: switch_down, switch: rail0-leaf1}
  - {name: recovery, duration: 1s}
safety: {max_faulted_nodes: 2}
)"));
  targets_.switches.push_back({"rail0-leaf1", "127.0.0.1", 1, "", "", false});
  Status st = Connect();
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("a fault names switch rail0-leaf1, and the fabric up runs no agent "
                              "on it (it was built by an older fdrill)"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("fdrill fabric up --nodes 4"), std::string::npos) << st.message();

  targets_.switches.clear();
  agents_.reset();
  st = Connect();
  EXPECT_NE(st.message().find("switch rail0-leaf1, and the fabric up has no such switch"),
            std::string::npos)
      << st.message();
}

// A switch's agent is dialled after the nodes, at its own target.
TEST_F(DrillAgentsTest, ASwitchAgentIsDialledAfterTheNodes) {
  Agents({"n0", "n1", "n2", "n3"});
  LoopbackAgent leaf("rail0-leaf1");
  ASSERT_TRUE(leaf.Listen().ok());
  targets_.switches.push_back({"rail0-leaf1", "127.0.0.1", leaf.port(), "/run/sw", "", true});
  ASSERT_NO_FATAL_FAILURE(Load(R"(name: t
fabric: {emulated: {nodes: 4, leaves: 2}}
topology: emulated
workload: {size: 4K}
phases:
  - {name: baseline, duration: 1s}
  - name: down
    duration: 1s
    faults:
      - {id: leaf, kind: switch_down, switch: rail0-leaf1}
  - {name: recovery, duration: 1s}
safety: {max_faulted_nodes: 2}
)"));
  ASSERT_TRUE(Connect().ok());
  EXPECT_EQ(agents_->nodes().size(), 4u);
  ASSERT_EQ(agents_->agents().size(), 5u);
  EXPECT_EQ(agents_->agents()[4].name, "rail0-leaf1");
  const Json lease = leaf.RequestsOf(proto::kLease).front();
  EXPECT_EQ(lease[proto::key::kLimits]["kinds"], Json::array({"switch_down"}));
  agents_->Shutdown();
}

// One agent silent: its result is a DeadlineExceeded naming the request
// and the agent; the others answer, in the order asked.
TEST_F(DrillAgentsTest, ASilentAgentIsADeadlineInItsPlace) {
  Agents({"n0", "n1"});
  fakes_[0]->set_answer([&](const Json& req) -> std::optional<Result<Json>> {
    if (RequestType(req) == proto::kSnapshot) return std::nullopt;
    return fakes_[0]->DefaultAnswer(req);
  });
  fakes_[1]->set_answer([&](const Json& req) -> std::optional<Result<Json>> {
    if (RequestType(req) == proto::kSnapshot) return Json{{"links", Json::array({"fab0"})}};
    return fakes_[1]->DefaultAnswer(req);
  });
  ASSERT_NO_FATAL_FAILURE(Load(kTwoNodes));
  ASSERT_TRUE(Connect().ok());
  auto r = agents_->CallEachNamed({"n1", "n0"}, proto::kSnapshot, {Json::object(), Json::object()},
                                  milliseconds(200));
  ASSERT_EQ(r.size(), 2u);
  ASSERT_TRUE(r[0].ok()) << r[0].status().message();
  EXPECT_EQ((*r[0])["links"], Json::array({"fab0"}));
  ASSERT_FALSE(r[1].ok());
  EXPECT_EQ(r[1].status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r[1].status().message(), "snapshot to n0: no answer within 200ms");
  // Every request carries the drill (the agent checks it against its lease).
  EXPECT_EQ(fakes_[1]->RequestsOf(proto::kSnapshot).front()[proto::key::kDrill], "t@1");
}

// Pushes reach on_push with the node they came from.
TEST_F(DrillAgentsTest, PushesAreHandedOnWithTheirNode) {
  Agents({"n0", "n1"});
  ASSERT_NO_FATAL_FAILURE(Load(kTwoNodes));
  ASSERT_TRUE(Connect().ok());
  fakes_[1]->Push(proto::kFaultExpired, {{proto::key::kFaultId, "cap"}});
  ASSERT_TRUE(Await([&] { return !pushes_.empty(); }));
  EXPECT_EQ(pushes_[0], "n1:fault_expired");
}

// An agent that goes away is reported lost once; Reconnect dials it again
// on the same link once it is back, checks it is that node and leases it
// again for this drill; one that stays away is an error after `within`.
TEST_F(DrillAgentsTest, ALostAgentIsReportedAndReconnectedWithItsLease) {
  Agents({"n0", "n1"});
  ASSERT_NO_FATAL_FAILURE(Load(kTwoNodes));
  ASSERT_TRUE(Connect().ok());
  const uint16_t port = fakes_[1]->port();
  fakes_[1]->Stop();
  ASSERT_TRUE(Await([&] { return !lost_.empty(); }));
  EXPECT_EQ(lost_[0].rfind("n1: lost the agent: ", 0), 0u) << lost_[0];

  auto gone = agents_->Reconnect("n1", milliseconds(300));
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.status().message().find("not back within 300ms"), std::string::npos)
      << gone.status().message();

  ASSERT_TRUE(fakes_[1]->Listen(port).ok());
  auto back = agents_->Reconnect("n1", seconds(5));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->value(proto::key::kNode, ""), "n1");
  EXPECT_TRUE(agents_->node("n1").link->connected());
  // Besides the lease thread's renewals: Connect's lease, then Reconnect's,
  // with the drill's id and n1's limits.
  std::vector<Json> leases;
  for (const Json& l : fakes_[1]->RequestsOf(proto::kLease)) {
    if (!l.contains(proto::key::kRenewal)) leases.push_back(l);
  }
  ASSERT_EQ(leases.size(), 2u);
  const Json again = leases.back();
  EXPECT_EQ(again[proto::key::kDrill], "t@1");
  EXPECT_EQ(again[proto::key::kTtlMs], 20000);
  EXPECT_EQ(again[proto::key::kLimits]["kinds"], Json::array({"link_rate"}));
  EXPECT_EQ(fakes_[1]->accepted(), 2);
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_EQ(lost_.size(), 1u);
  }
}

// The agent back is another node: the reconnect is refused, naming both.
TEST_F(DrillAgentsTest, AReconnectToAnotherNodeIsRefused) {
  Agents({"n0", "n1"});
  ASSERT_NO_FATAL_FAILURE(Load(kTwoNodes));
  ASSERT_TRUE(Connect().ok());
  const uint16_t port = fakes_[1]->port();
  fakes_[1].reset();
  ASSERT_TRUE(Await([&] { return !lost_.empty(); }));
  LoopbackAgent other("n9");
  ASSERT_TRUE(other.Listen(port).ok());
  auto back = agents_->Reconnect("n1", seconds(5));
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().message(),
            "agent at 127.0.0.1:" + std::to_string(port) + " says it is n9, expected n1");
  // Hello only: whatever leases it got are the lease thread's renewals.
  EXPECT_EQ(other.Types().front(), "hello");
  for (const Json& l : other.RequestsOf(proto::kLease))
    EXPECT_TRUE(l.contains(proto::key::kRenewal));
  agents_.reset();
}

}  // namespace
}  // namespace fdrill

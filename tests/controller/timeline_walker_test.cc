// The timeline walker against fake agents (tests/fakes/fake_agent_calls.h):
// what it asks of the agents, in what batches, what it journals before each
// call, and which faults it leaves for RevertInForce when the drill ends
// early. Real time, phases of tens of milliseconds; no fabric, no workload.
#include "harness/controller/timeline_walker.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/wire/protocol.h"
#include "tests/controller/drill_fixture.h"

namespace fdrill {
namespace {

using std::chrono::milliseconds;

FaultSpec Fault(const std::string& id, const std::string& node) {
  FaultSpec f;
  f.id = id;
  f.kind = "link_rate";
  f.node = node;
  f.scope = "interface";
  f.params = {{"interface", "fab0"}, {"rate", "100mbit"}};
  f.max_duration = std::chrono::seconds(30);
  return f;
}

PhaseSpec Phase(const std::string& name, Duration d, std::vector<FaultSpec> faults = {}) {
  PhaseSpec p;
  p.name = name;
  p.duration = d;
  p.faults = std::move(faults);
  return p;
}

class TimelineWalkerTest : public controller_test::DrillFixture {
 protected:
  TimelineWalkerTest() : DrillFixture("fdrill-walker-", {"n0", "n1", "n2"}) {}
  void SetUp() override {
    DrillFixture::SetUp();
    state_.interrupt = &interrupt_;
  }

  // Walks `s` to its end, or to wherever the drill ends it.
  TimelineWalker& Walk(const Scenario& s) {
    s_ = s;
    walker_ = std::make_unique<TimelineWalker>(ctx_, workloads_);
    walker_->Walk();
    return *walker_;
  }

  // The ids of the events of TYPE so far, in order.
  std::vector<std::string> IdsOf(const std::string& type) const {
    std::vector<std::string> ids;
    for (const Json& e : Events()) {
      if (e.value("type", "") == type) ids.push_back(e.value("id", ""));
    }
    return ids;
  }
  static std::vector<std::string> Targets(const FakeAgentCalls::Batch& b) {
    std::vector<std::string> out;
    for (const auto& r : b.requests)
      out.push_back(r.name + ":" + r.body.value(proto::key::kFaultId, ""));
    return out;
  }

  std::atomic<bool> interrupt_{false};
  std::unique_ptr<TimelineWalker> walker_;
};

// Two faults due at one instant go out as one batch, to both agents at
// once, each journalled (fault_apply) before the batch is sent; they come
// back as one batch too, and nothing is left in force.
TEST_F(TimelineWalkerTest, FaultsDueAtOneInstantAreAppliedAndRevertedAsOneBatch) {
  Scenario s;
  s.phases = {Phase("baseline", milliseconds(40)),
              Phase("cut", milliseconds(120), {Fault("f1", "n0"), Fault("f2", "n1")}),
              Phase("recovery", milliseconds(40))};
  std::vector<std::string> journalled_before;
  agents_.before_answer = [&](const FakeAgentCalls::Batch& b) {
    if (b.type == proto::kApply) journalled_before = IdsOf("fault_apply");
  };
  TimelineWalker& walker = Walk(s);

  const auto applies = agents_.BatchesOf(proto::kApply);
  ASSERT_EQ(applies.size(), 1u);
  EXPECT_EQ(Targets(applies[0]), (std::vector<std::string>{"n0:f1", "n1:f2"}));
  EXPECT_EQ(applies[0].requests[0].body.value(proto::key::kKind, ""), "link_rate");
  EXPECT_EQ(journalled_before, (std::vector<std::string>{"f1", "f2"}));
  const auto reverts = agents_.BatchesOf(proto::kRevert);
  ASSERT_EQ(reverts.size(), 1u);
  EXPECT_EQ(Targets(reverts[0]), (std::vector<std::string>{"n0:f1", "n1:f2"}));
  EXPECT_EQ(IdsOf("fault_reverted"), (std::vector<std::string>{"f1", "f2"}));
  EXPECT_FALSE(state_.failed);
  EXPECT_TRUE(walker.InForceOn("n0").empty());
  EXPECT_TRUE(walker.InForceOn("n1").empty());
  walker.RevertInForce();  // nothing left: no call
  EXPECT_EQ(agents_.BatchesOf(proto::kRevert).size(), 1u);
}

// An agent that fails its apply ends the walk at once (the drill fails);
// its fault counts as in force — the apply may have landed before the
// answer was lost — and RevertInForce reverts it with the one that worked.
TEST_F(TimelineWalkerTest, AnApplyThatFailsEndsTheWalkAndItsFaultIsRevertedAtTheEnd) {
  Scenario s;
  s.phases = {Phase("baseline", milliseconds(20)),
              Phase("cut", std::chrono::seconds(5), {Fault("f1", "n0"), Fault("f2", "n1")})};
  agents_.answer = [](const std::string& name, const std::string& type,
                      const Json&) -> Result<Json> {
    if (type == proto::kApply && name == "n1") return Unavailable("connection reset");
    return Json{{"ok", true}, {"verified", true}};
  };
  const auto t0 = std::chrono::steady_clock::now();
  TimelineWalker& walker = Walk(s);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_TRUE(state_.failed);
  EXPECT_EQ(walker.InForceOn("n0"), std::vector<std::string>{"f1"});
  EXPECT_EQ(walker.InForceOn("n1"), std::vector<std::string>{"f2"});
  EXPECT_TRUE(agents_.BatchesOf(proto::kRevert).empty());
  walker.RevertInForce();
  const auto reverts = agents_.BatchesOf(proto::kRevert);
  ASSERT_EQ(reverts.size(), 1u);
  EXPECT_EQ(Targets(reverts[0]), (std::vector<std::string>{"n0:f1", "n1:f2"}));
  bool named = false;
  for (const Json& e : Events()) {
    if (e.value("type", "") == "error" && e.value("node", "") == "n1" &&
        e.value("message", "").find("apply f2: connection reset") != std::string::npos)
      named = true;
  }
  EXPECT_TRUE(named) << "no error event naming n1's failed apply";
}

// A lease that lapses mid-fault (the lease thread fails the drill) ends the
// walk within a turn, not at the phase's end; the fault is still in force
// for RevertInForce.
TEST_F(TimelineWalkerTest, ALeaseLostMidFaultEndsTheWalkWithinATurn) {
  Scenario s;
  s.phases = {Phase("baseline", milliseconds(20)),
              Phase("cut", std::chrono::seconds(5), {Fault("f1", "n2")})};
  std::thread lease;
  agents_.before_answer = [&](const FakeAgentCalls::Batch& b) {
    if (b.type != proto::kApply) return;
    lease = std::thread([this] {
      std::this_thread::sleep_for(milliseconds(100));
      state_.Fail();
    });
  };
  const auto t0 = std::chrono::steady_clock::now();
  TimelineWalker& walker = Walk(s);
  lease.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  EXPECT_EQ(walker.InForceOn("n2"), std::vector<std::string>{"f1"});
  EXPECT_TRUE(agents_.BatchesOf(proto::kRevert).empty());
  walker.RevertInForce();
  ASSERT_EQ(agents_.BatchesOf(proto::kRevert).size(), 1u);
  EXPECT_EQ(IdsOf("fault_reverted"), std::vector<std::string>{"f1"});
}

// Ctrl-C mid-fault: the engine's abort reverts what is in force there and
// then, records the abort with its cause, and the walk ends.
TEST_F(TimelineWalkerTest, AnInterruptMidFaultRevertsAndRecordsTheAbort) {
  Scenario s;
  s.phases = {Phase("baseline", milliseconds(20)),
              Phase("cut", std::chrono::seconds(5), {Fault("f1", "n0")})};
  agents_.before_answer = [&](const FakeAgentCalls::Batch& b) {
    if (b.type == proto::kApply) interrupt_ = true;
  };
  const auto t0 = std::chrono::steady_clock::now();
  TimelineWalker& walker = Walk(s);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  EXPECT_FALSE(state_.failed);
  EXPECT_TRUE(walker.abort_recorded());
  EXPECT_FALSE(walker.stopped());
  const auto reverts = agents_.BatchesOf(proto::kRevert);
  ASSERT_EQ(reverts.size(), 1u);
  EXPECT_EQ(Targets(reverts[0]), std::vector<std::string>{"n0:f1"});
  EXPECT_TRUE(walker.InForceOn("n0").empty());
  std::string cause;
  for (const Json& e : Events()) {
    if (e.value("type", "") == "abort") cause = e.value("cause", "");
  }
  EXPECT_EQ(cause, "interrupted");
}

// A restarted agent's journal sweep reverted a fault: RevertInForce leaves
// it alone, and reverts only what is still in force elsewhere.
TEST_F(TimelineWalkerTest, AFaultSweptByARestartedAgentIsNotRevertedAgain) {
  Scenario s;
  s.phases = {Phase("cut", std::chrono::seconds(5), {Fault("f1", "n0"), Fault("f2", "n1")})};
  std::atomic<bool> applied{false};
  agents_.before_answer = [&](const FakeAgentCalls::Batch& b) {
    if (b.type == proto::kApply) applied = true;
  };
  std::thread lost([&] {
    while (!applied) std::this_thread::sleep_for(milliseconds(5));
    std::this_thread::sleep_for(milliseconds(50));
    state_.Fail();  // n0's agent was lost
  });
  TimelineWalker& walker = Walk(s);
  lost.join();
  walker.Swept("n0", {"f1"});
  walker.RevertInForce();
  const auto reverts = agents_.BatchesOf(proto::kRevert);
  ASSERT_EQ(reverts.size(), 1u);
  EXPECT_EQ(Targets(reverts[0]), std::vector<std::string>{"n1:f2"});
}

}  // namespace
}  // namespace fdrill

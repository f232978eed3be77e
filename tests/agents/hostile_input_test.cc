// Issue 48: the dead-man switch survives what the outside world sends it —
// a push that fails, a renewal delivered late, a lease asked for while an
// earlier one's fault is still in force (its timer was dead), a latch that
// cannot be written, a request nested far past what the wire allows, a
// timer that throws. Each test failed, crashed or left a fault on the
// main branch before the issue.
#include <filesystem>
#include <stdexcept>

#include <gtest/gtest.h>

#include "agents/agent_service.h"
#include "agents/server.h"
#include "common/wire/protocol.h"
#include "tests/agents/test_agent.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_net.h"
#include "tests/support/json_lines.h"

namespace fdrill {
namespace {

// The fake kernel, until Arm(): from then on every command throws (what
// std::filesystem or an allocation may do where nothing should).
class ThrowingRunner final : public ProcessRunner {
 public:
  explicit ThrowingRunner(FakeNetKernel& k) : k_(k) {}
  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration t) override {
    if (armed_) throw std::runtime_error("the runner threw");
    return k_.Run(argv, t);
  }
  void Arm() { armed_ = true; }

 private:
  FakeNetKernel& k_;
  bool armed_ = false;
};

class HostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ScratchPath("fdrill-hostile-test-");
    std::filesystem::create_directories(dir_);
    service_ = std::make_unique<AgentService>(TestAgentConfig("n1", dir_), Host{&runner_, nullptr},
                                              clock_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Json Call(const std::string& type, Json body, const std::string& subject = "CN=a") {
    return service_->Handle(MakeRequest(type, ++id_, std::move(body)),
                            Caller{.peer = "10.0.0.1:1", .subject = subject});
  }
  Json Lease(const std::string& drill, int64_t ttl_ms) {
    return Call("lease", {{"ttl_ms", ttl_ms}, {"drill", drill}});
  }
  Json Renewal(const std::string& drill, int64_t ttl_ms, uint64_t n) {
    return Call("lease", {{"ttl_ms", ttl_ms},
                          {"drill", drill},
                          {"ack", "push"},
                          {"renewal", n},
                          {"ack_within_ms", uint64_t{100}}});
  }
  Json ApplyRate(const std::string& drill) {
    return Call("apply", {{"fault_id", "slow"},
                          {"drill", drill},
                          {"kind", "link_rate"},
                          {"params", {{"interface", "fab0"}, {"rate", "100mbit"}}}});
  }
  bool Shaped() { return kernel_.ifaces["fab0"].qdisc_kind == "tbf"; }

  std::filesystem::path dir_;
  FakeNetKernel kernel_;
  ThrowingRunner runner_{kernel_};
  FakeClock clock_;
  std::unique_ptr<AgentService> service_;
  uint64_t id_ = 0;
};

TEST_F(HostileInputTest, TheLeaseLapsesAndRevertsWhenEveryPushFails) {
  ASSERT_TRUE(Lease("d1", 1000)["ok"].get<bool>());
  ASSERT_TRUE(ApplyRate("d1")["ok"].get<bool>());
  int pushes = 0;
  service_->set_push([&](Json) {
    ++pushes;
    throw std::runtime_error("a receiver failed");
  });
  clock_.Advance(std::chrono::milliseconds(1100));
  ASSERT_NO_THROW(service_->Tick());
  EXPECT_FALSE(Shaped());
  EXPECT_EQ(service_->active_faults(), 0u);
  EXPECT_GE(pushes, 1);  // lease_expired was tried
}

TEST_F(HostileInputTest, ALateRenewalDoesNotTakeALapsedLeaseBack) {
  ASSERT_TRUE(Lease("d1", 1000)["ok"].get<bool>());
  ASSERT_TRUE(Renewal("d1", 1000, 1).is_null());  // taken, acknowledged by push
  clock_.Advance(std::chrono::milliseconds(1500));
  // Sent before a management cut, delivered after the lapse, before a tick.
  Json late = Renewal("d1", 1000, 2);
  ASSERT_TRUE(late.is_object());
  EXPECT_FALSE(late["ok"].get<bool>()) << late.dump();
  EXPECT_NE(late["error"].get<std::string>().find("a renewal never takes a lease"),
            std::string::npos)
      << late.dump();
  EXPECT_FALSE(service_->lease_held());  // the lapse, handled as it was seen
  EXPECT_FALSE(ApplyRate("d1")["ok"].get<bool>());
  // A new acquire takes it.
  EXPECT_TRUE(Lease("d1", 1000)["ok"].get<bool>());
}

TEST_F(HostileInputTest, NoLeaseIsGrantedWhileAFaultOfAnEarlierLeaseIsInForce) {
  ASSERT_TRUE(Lease("d1", 1000)["ok"].get<bool>());
  ASSERT_TRUE(ApplyRate("d1")["ok"].get<bool>());
  // The lease lapses with no tick to see it (a timer that died).
  clock_.Advance(std::chrono::seconds(30));
  ASSERT_TRUE(Shaped());
  Json other = Call("lease", {{"ttl_ms", 5000}, {"drill", "d2"}}, "CN=b");
  ASSERT_TRUE(other["ok"].get<bool>()) << other.dump();
  EXPECT_FALSE(Shaped()) << "the new drill was granted the node with d1's fault in force";
  EXPECT_EQ(service_->active_faults(), 0u);
  EXPECT_EQ(Call("hello", Json::object())["active_faults"], 0);
}

TEST_F(HostileInputTest, PanicRevertsBeforeItLatchesAndALatchItCannotWriteHoldsInMemory) {
  ASSERT_TRUE(Lease("d1", 86400000)["ok"].get<bool>());
  ASSERT_TRUE(ApplyRate("d1")["ok"].get<bool>());
  // The latch file cannot be written (its .partial is a directory: a full
  // or read-only disk in effect, for root too).
  std::filesystem::create_directories(dir_ / "panic.json.partial");
  Json panic = Call("revert_all", {{"latch", true}, {"reason", "drill"}});
  ASSERT_TRUE(panic["ok"].get<bool>()) << panic.dump();
  EXPECT_FALSE(Shaped()) << "panic left the cap because it could not write its latch";
  EXPECT_NE(panic.value("latch_error", "").find("panic latch"), std::string::npos) << panic.dump();
  EXPECT_TRUE(service_->panic_latched());
  Json lease = Lease("d1", 5000);
  EXPECT_FALSE(lease["ok"].get<bool>());
  EXPECT_EQ(lease["code"], "permission_denied") << lease.dump();
  Json hello = Call("hello", Json::object());
  EXPECT_TRUE(hello["panic"].contains("unsaved")) << hello.dump();
}

TEST_F(HostileInputTest, ARequestNestedFarPastTheWireLimitIsAuditedWithoutRecursing) {
  // Handle is called directly here (the fake fleet and tests do): the
  // frame decoder's limit is not in the way, so the audit writer must cope.
  // (1,000 deep: building the request copies it, and nlohmann's copy
  // recurses; the wire's own 100,000-deep case is in wire_test.cc and
  // agent_tls_test.cc.)
  Json deep = Json::array();
  Json* at = &deep;
  for (int i = 0; i < 1000; ++i) at = &(*at)[0];
  Json reply;
  ASSERT_NO_THROW(
      reply = Call("apply", {{"fault_id", "x"}, {"kind", "link_rate"}, {"params", deep}}, "CN=w"));
  EXPECT_FALSE(reply["ok"].get<bool>());
  auto lines = ReadJsonLines((dir_ / "audit.jsonl").string());
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back()["params"].get<std::string>().find("nested deeper than 64"),
            std::string::npos);
}

TEST_F(HostileInputTest, ATimerThatThrowsEndsTheAgentForItsSupervisorAfterReverting) {
  ASSERT_TRUE(Lease("d1", 86400000)["ok"].get<bool>());
  ASSERT_TRUE(
      Call("apply",
           {{"fault_id", "flap"},
            {"drill", "d1"},
            {"kind", "link_flap"},
            {"params", {{"interface", "fab0"}, {"down", "100ms"}, {"period", "200ms"}}}})["ok"]
          .get<bool>());
  runner_.Arm();
  clock_.Advance(std::chrono::milliseconds(150));  // the flap's up edge is due: a command
  EXPECT_EXIT(TickOrDie(*service_), ::testing::ExitedWithCode(kTimerFailedExit), "");
}

}  // namespace
}  // namespace fdrill

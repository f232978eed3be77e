// The agent's rules, end to end over mutual TLS in one process (the agent
// and clients of tests/tls/agent_tls.h): roles (an observer reads and
// changes nothing), revocation, the lease (none, another drill's, its
// limits), the agent's own policy, the guard on its path to the
// controller, a frame nested past the wire's limit, and the panic latch
// across a restart. Each refusal names why; none reaches the kernel.
#include "tests/tls/agent_tls.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fdrill {
namespace {

using tls_test::AgentTlsTest;
using tls_test::Client;
using tls_test::kController;

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

}  // namespace
}  // namespace fdrill

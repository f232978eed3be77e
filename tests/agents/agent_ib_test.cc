// ib_watch: the agent listens to its RDMA devices' async events (a fake
// verbs source here) and pushes each as `ib_async`; a source that never
// returns holds up nothing.
#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "common/wire/protocol.h"
#include "tests/agents/test_agent.h"
#include "tests/fakes/fake_verbs.h"

namespace fdrill {
namespace {

using Clock = std::chrono::steady_clock;

FakeVerbs OneHca() {
  FakeVerbs v;
  v.devices = {
      {.name = "mlx5_0",
       .ports = {
           {.port = 1, .state = "ACTIVE", .phys_state = 5, .lid = 7, .link_layer = "InfiniBand"}}}};
  return v;
}

std::vector<Json> IbPushes(const std::vector<Json>& pushes) {
  std::vector<Json> out;
  std::copy_if(pushes.begin(), pushes.end(), std::back_inserter(out),
               [](const Json& p) { return p.value("type", "") == proto::kIbAsync; });
  return out;
}

// Ticks until `pushes` holds `n` ib_async pushes (5 s at most).
bool TickUntil(FakeHostAgent& agent, std::vector<Json>& pushes, size_t n) {
  for (int i = 0; i < 500; ++i) {
    agent.service->Tick();
    if (IbPushes(pushes).size() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Until `done` holds, 5 s at most.
bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 500 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return done();
}

TEST(AgentIb, PushesEachAsyncEventWithTheDeviceAndPort) {
  FakeVerbs verbs = OneHca();
  FakeHostAgent agent("n1", "agent-ib", nullptr, &verbs);
  std::vector<Json> pushes;
  agent.service->set_push([&](Json p) { pushes.push_back(std::move(p)); });
  Json r = agent.Call("ib_watch", {{"for_ms", 60000}});
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  EXPECT_TRUE(r.value("watching", false));
  ASSERT_EQ(r["devices"].size(), 1u) << r.dump();
  EXPECT_EQ(r["devices"][0].value("name", ""), "mlx5_0");
  const Json& port = r["devices"][0]["ports"][0];
  EXPECT_EQ(port.value("port", 0), 1);
  EXPECT_EQ(port.value("state", ""), "ACTIVE");
  EXPECT_EQ(port.value("phys_state", 0), 5);
  EXPECT_EQ(port.value("lid", 0), 7);
  EXPECT_EQ(port.value("link_layer", ""), "InfiniBand");

  verbs.events->Push({.device = "mlx5_0", .port = 1, .event = "PORT_ERR", .wall_ns = 111});
  ASSERT_TRUE(TickUntil(agent, pushes, 1));
  verbs.events->Push({.device = "mlx5_0", .port = 1, .event = "PORT_ACTIVE", .wall_ns = 222});
  ASSERT_TRUE(TickUntil(agent, pushes, 2));
  const std::vector<Json> ib = IbPushes(pushes);
  ASSERT_EQ(ib.size(), 2u);
  EXPECT_EQ(ib[0].value("node", ""), "n1");
  EXPECT_EQ(ib[0].value("device", ""), "mlx5_0");
  EXPECT_EQ(ib[0].value("port", 0), 1);
  EXPECT_EQ(ib[0].value("event", ""), "PORT_ERR");
  EXPECT_EQ(ib[0].value("wall_ns", int64_t{0}), 111);
  EXPECT_EQ(ib[1].value("event", ""), "PORT_ACTIVE");

  Json stop = agent.Call("ib_watch", {{"stop", true}});
  EXPECT_TRUE(stop.value("stop", false)) << stop.dump();
  EXPECT_TRUE(WaitFor([&] { return verbs.events->SourcesAlive() == 0; }))
      << "a stopped watch closes its devices once its Poll returns";
}

TEST(AgentIb, ANodeWithoutRdmaDevicesWatchesNothing) {
  FakeVerbs none;
  FakeHostAgent agent("n1", "agent-ib-none", nullptr, &none);
  Json r = agent.Call("ib_watch");
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  EXPECT_FALSE(r.value("watching", true));
  EXPECT_EQ(r["devices"], Json::array());
  EXPECT_EQ(none.opened, 0) << "nothing is opened on a node without devices";

  // The fake machine (no verbs at all) answers the same.
  FakeHostAgent fake("n2", "agent-ib-fake");
  r = fake.Call("ib_watch");
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  EXPECT_FALSE(r.value("watching", true));
}

TEST(AgentIb, AStuckSourceNeverHoldsTheAgent) {
  FakeVerbs verbs = OneHca();
  FakeHostAgent agent("n1", "agent-ib-stuck", nullptr, &verbs);
  verbs.events->Stick();  // Poll never returns until released
  ASSERT_TRUE(agent.Call("ib_watch").value("ok", false));
  ASSERT_TRUE(WaitFor([&] { return verbs.events->Polls() >= 1; }));

  const auto start = Clock::now();
  agent.service->Tick();
  Json replaced = agent.Call("ib_watch");  // replaces the stuck watch
  EXPECT_TRUE(replaced.value("ok", false)) << replaced.dump();
  EXPECT_TRUE(agent.Call("ib_watch", {{"stop", true}}).value("ok", false));
  agent.service->RevertEverything("test: the lease lapsed");
  agent.service->Tick();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(1))
      << "stopping, replacing and the lapse's revert waited for a stuck Poll";
  EXPECT_EQ(verbs.events->SourcesAlive(), 2) << "the stuck threads still own their sources";

  verbs.events->Release();
  EXPECT_TRUE(WaitFor([&] { return verbs.events->SourcesAlive() == 0; }))
      << "released, each stopped watch's thread ends and closes its devices";
}

TEST(AgentIb, TheWatchEndsAfterForMs) {
  FakeVerbs verbs = OneHca();
  FakeHostAgent agent("n1", "agent-ib-for", nullptr, &verbs);
  ASSERT_TRUE(agent.Call("ib_watch", {{"for_ms", 1}}).value("ok", false));
  EXPECT_TRUE(WaitFor([&] { return verbs.events->SourcesAlive() == 0; }));
}

TEST(AgentIb, RefusesABadForMsAndSaysWhyVerbsFailed) {
  FakeVerbs verbs = OneHca();
  FakeHostAgent agent("n1", "agent-ib-bad", nullptr, &verbs);
  for (Json bad : {Json(0), Json("long"), Json(-5), Json(8LL * 86400000)}) {
    Json r = agent.Call("ib_watch", {{"for_ms", bad}});
    EXPECT_FALSE(r.value("ok", true)) << bad.dump();
    EXPECT_NE(r.dump().find("ib_watch \\\"for_ms\\\""), std::string::npos) << r.dump();
  }
  EXPECT_EQ(verbs.opened, 0);

  verbs.list_error = Unavailable("ibv_open_device mlx5_0: Permission denied");
  Json r = agent.Call("ib_watch");
  EXPECT_FALSE(r.value("ok", true));
  EXPECT_NE(r.dump().find("ib_watch: ibv_open_device mlx5_0: Permission denied"), std::string::npos)
      << r.dump();
  verbs.list_error = Status::Ok();
  verbs.open_error = Unavailable("the async fd of mlx5_0: Bad file descriptor");
  r = agent.Call("ib_watch");
  EXPECT_FALSE(r.value("ok", true));
  EXPECT_NE(r.dump().find("the async fd of mlx5_0"), std::string::npos) << r.dump();
}

}  // namespace
}  // namespace fdrill

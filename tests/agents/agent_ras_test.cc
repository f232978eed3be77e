// ras_watch: the agent asks the node's NCCL RAS service (a fake endpoint
// speaking NCCL 2.28.9's protocol) and pushes what changes.
#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "common/wire/protocol.h"
#include "tests/agents/test_agent.h"
#include "tests/fakes/fake_ras_server.h"

namespace fdrill {
namespace {

using testing::FakeRasJob;
using testing::FakeRasServer;

// Ticks until `pushes` holds a push for which `done` holds (5 s at most).
bool TickUntil(FakeHostAgent& agent, std::vector<Json>& pushes,
               const std::function<bool(const Json&)>& done) {
  for (int i = 0; i < 500; ++i) {
    agent.service->Tick();
    for (const Json& p : pushes)
      if (done(p)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(AgentRas, PushesTheJobsRasStatusWhenItChanges) {
  FakeRasServer server;
  FakeHostAgent agent("n1", "agent-ras");
  std::vector<Json> pushes;
  agent.service->set_push([&](Json p) { pushes.push_back(std::move(p)); });
  Json r = agent.Call("ras_watch", {{"ras_addr", "127.0.0.1:" + std::to_string(server.port())},
                                    {"interval_ms", 100}});
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  EXPECT_TRUE(r.value("watching", false));
  auto is_ras = [](const Json& p) { return p.value("type", "") == proto::kRas; };
  ASSERT_TRUE(TickUntil(agent, pushes, is_ras));
  const Json first = *std::find_if(pushes.begin(), pushes.end(), is_ras);
  EXPECT_EQ(first.value("node", ""), "n1");
  EXPECT_TRUE(first.value("answered", false)) << first.dump();
  EXPECT_EQ(first["ras_status"].value("missing", -1), 0);
  EXPECT_GT(first.value("wall_ns", int64_t{0}), 0);

  // Unchanged: no second push. A rank stops answering: one push saying so.
  for (int i = 0; i < 30; ++i) {
    agent.service->Tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const size_t before = pushes.size();
  EXPECT_EQ(std::count_if(pushes.begin(), pushes.end(), is_ras), 1) << "a status that did not "
                                                                       "change is not pushed";
  server.set_job(FakeRasJob{.missing = 1});
  ASSERT_TRUE(TickUntil(agent, pushes, [&](const Json& p) {
    return is_ras(p) && p.contains("ras_status") && p["ras_status"].value("missing", 0) == 1;
  }));
  EXPECT_GT(pushes.size(), before);

  EXPECT_TRUE(agent.Call("ras_watch", {{"stop", true}}).value("ok", false));
}

TEST(AgentRas, ANodeWithoutAJobSaysRasDoesNotAnswer) {
  int port = 0;
  {
    FakeRasServer gone;
    port = gone.port();
  }
  FakeHostAgent agent("n2", "agent-ras-none");
  std::vector<Json> pushes;
  agent.service->set_push([&](Json p) { pushes.push_back(std::move(p)); });
  ASSERT_TRUE(agent
                  .Call("ras_watch",
                        {{"ras_addr", "localhost:" + std::to_string(port)}, {"interval_ms", 100}})
                  .value("ok", false));
  auto refused = [](const Json& p) {
    return p.value("type", "") == proto::kRas && !p.value("answered", true);
  };
  ASSERT_TRUE(TickUntil(agent, pushes, refused));
  // Counters pushes come in between: the RAS one is found by its type.
  const Json ras = *std::find_if(pushes.begin(), pushes.end(), refused);
  EXPECT_NE(ras.value("ras_error", "").find("no NCCL job with RAS"), std::string::npos)
      << ras.dump();
}

TEST(AgentRas, AsksOnlyItsOwnNodeAndRefusesBadFields) {
  FakeHostAgent agent("n1", "agent-ras-refuse");
  for (const char* addr : {"192.0.2.1:28028", "example.com:28028", "localhost", "localhost:0"}) {
    Json r = agent.Call("ras_watch", {{"ras_addr", addr}});
    EXPECT_FALSE(r.value("ok", true)) << addr;
    EXPECT_NE(r.value("error", "").find("ras_addr"), std::string::npos) << r.dump();
  }
  Json r = agent.Call("ras_watch", {{"interval_ms", 5}});
  EXPECT_FALSE(r.value("ok", true));
  EXPECT_NE(r.value("error", "").find("interval_ms"), std::string::npos) << r.dump();
  r = agent.Call("ras_watch", {{"for_ms", "long"}});
  EXPECT_FALSE(r.value("ok", true));
}

TEST(AgentRas, AStuckRasServiceNeverHoldsUpTheAgent) {
  // It accepts and says nothing for 1.5 s: the watch's query waits on its
  // own thread; stopping it, replacing it and a lease lapse do not.
  FakeRasServer stuck;
  stuck.set_silent(true);
  FakeHostAgent agent("n1", "agent-ras-stuck");
  const std::string addr = "127.0.0.1:" + std::to_string(stuck.port());
  ASSERT_TRUE(
      agent.Call("ras_watch", {{"ras_addr", addr}, {"interval_ms", 100}}).value("ok", false));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the query is in flight
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(agent.Call("ras_watch", {{"ras_addr", addr}}).value("ok", false));  // replaces
  EXPECT_TRUE(agent.Call("ras_watch", {{"stop", true}}).value("stop", false));
  agent.service->RevertEverything("test: a lapsed lease");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
}

}  // namespace
}  // namespace fdrill

// The no-op host backend (agents/fake_host.h) and the fake fleet
// (agents/fake_fleet.h): faults are recorded and verified against the model,
// never applied; the journal, lease and max-duration still do their work.
#include "agents/fake_host.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <gtest/gtest.h>

#include "agents/agent_service.h"
#include "agents/counters.h"
#include "agents/fake_fleet.h"
#include "agents/journal.h"
#include "common/host/iproute_net_stack.h"
#include "tests/agents/test_agent.h"

namespace fdrill {
namespace {

constexpr char kDirPrefix[] = "fdrill-fake-host-test-";

class FakeHostServiceTest : public ::testing::Test {
 protected:
  Json Call(const std::string& type, Json body = Json::object()) {
    return agent_.Call(type, std::move(body));
  }
  Json Apply(const std::string& id, const std::string& kind, Json params) {
    return agent_.Apply(id, kind, std::move(params));
  }
  const FakeHostKernel::Iface& Fab0() const { return agent_.fake.kernel.ifaces().at("fab0"); }

  FakeHostAgent agent_{"f1", kDirPrefix};
  // The agent's parts, under the names the tests use.
  const std::filesystem::path& dir_ = agent_.dir;
  FakeHostKernel& kernel_ = agent_.fake.kernel;
  FakeClock& clock_ = agent_.clock;
  AgentService* const service_ = agent_.service.get();
};

TEST_F(FakeHostServiceTest, LinkRateIsRecordedVerifiedAndReverted) {
  Json r = Apply("slow", "link_rate", {{"interface", "fab0"}, {"rate", "100mbit"}});
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_TRUE(r["verified"].get<bool>()) << r.dump();
  EXPECT_EQ(Fab0().qdisc_kind, "tbf");
  EXPECT_EQ(Fab0().rate_bytes * 8, 100'000'000u);
  ASSERT_FALSE(kernel_.recorded().empty());
  EXPECT_EQ(kernel_.recorded().back()[0], "tc");
  EXPECT_EQ(Journal((dir_ / "journal.jsonl").string()).Pending()->size(), 1u);

  r = Call("revert", {{"fault_id", "slow"}});
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_TRUE(r["was_applied"].get<bool>());
  EXPECT_EQ(Fab0().qdisc_kind, "noqueue");
  EXPECT_TRUE(Journal((dir_ / "journal.jsonl").string()).Pending()->empty());
}

TEST_F(FakeHostServiceTest, LinkFlapTakesTheModelLinkDownAndUp) {
  Json r = Apply("flap", "link_flap", {{"interface", "fab0"}, {"down", "10s"}});
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_TRUE(r["verified"].get<bool>()) << r.dump();
  EXPECT_FALSE(Fab0().up);
  ASSERT_TRUE(Call("revert", {{"fault_id", "flap"}})["ok"].get<bool>());
  EXPECT_TRUE(Fab0().up);
}

TEST_F(FakeHostServiceTest, TheLeaseStillRevertsWhenItLapses) {
  ASSERT_TRUE(Call("lease", {{"ttl_ms", 1000}})["ok"].get<bool>());
  ASSERT_TRUE(
      Apply("slow", "link_rate", {{"interface", "fab0"}, {"rate", "1gbit"}})["ok"].get<bool>());
  std::vector<Json> pushed;
  service_->set_push([&](Json m) { pushed.push_back(m); });
  clock_.Advance(std::chrono::milliseconds(1100));
  service_->Tick();
  EXPECT_EQ(service_->active_faults(), 0u);
  EXPECT_EQ(Fab0().qdisc_kind, "noqueue");
  ASSERT_FALSE(pushed.empty());
  EXPECT_EQ(pushed.back()["type"], "lease_expired");
}

// A fault in force wakes the agent for what is due, not 50 times a second:
// a rate limit with nothing scheduled keeps the idle tick; a flap's edge,
// a max duration and the lease's lapse (which reverts everything) bring the
// tick to that instant.
TEST_F(FakeHostServiceTest, AFaultInForceTicksOnlyForWhatIsDue) {
  using std::chrono::milliseconds;
  EXPECT_EQ(service_->TickInterval(), AgentService::kIdleTick);
  ASSERT_TRUE(
      Apply("rate", "link_rate", {{"interface", "fab0"}, {"rate", "100mbit"}})["ok"].get<bool>());
  EXPECT_EQ(service_->TickInterval(), AgentService::kIdleTick);
  ASSERT_TRUE(Call("revert", {{"fault_id", "rate"}})["ok"].get<bool>());
  ASSERT_TRUE(
      Apply("flap", "link_flap", {{"interface", "fab0"}, {"down", "50ms"}, {"count", 3}})["ok"]
          .get<bool>());
  EXPECT_EQ(service_->TickInterval(), milliseconds(50));  // the up edge
  ASSERT_TRUE(Call("revert", {{"fault_id", "flap"}})["ok"].get<bool>());
  EXPECT_EQ(service_->TickInterval(), AgentService::kIdleTick);
  Json rate = {{"interface", "fab0"}, {"rate", "100mbit"}};
  ASSERT_TRUE(Call("apply", {{"fault_id", "capped"},
                             {"kind", "link_rate"},
                             {"params", rate},
                             {"max_duration_ms", 30}})["ok"]
                  .get<bool>());
  EXPECT_EQ(service_->TickInterval(), milliseconds(30));
}

TEST_F(FakeHostServiceTest, AFaultInForceWakesTheAgentWhenItsLeaseLapses) {
  using std::chrono::milliseconds;
  ASSERT_TRUE(Call("lease", {{"ttl_ms", 1000}})["ok"].get<bool>());
  ASSERT_TRUE(
      Apply("rate", "link_rate", {{"interface", "fab0"}, {"rate", "100mbit"}})["ok"].get<bool>());
  EXPECT_EQ(service_->TickInterval(), AgentService::kIdleTick);
  clock_.Advance(milliseconds(950));
  EXPECT_EQ(service_->TickInterval(), milliseconds(51));  // just past the deadline
  clock_.Advance(milliseconds(51));
  service_->Tick();
  EXPECT_EQ(service_->active_faults(), 0u);
  EXPECT_EQ(Fab0().qdisc_kind, "noqueue");
}

// A flap's edges are due at exact times since its apply: the agent wakes for
// the edge itself rather than on the tick after it (up to 20 ms late), and
// the edge is made on that wake-up.
TEST_F(FakeHostServiceTest, TheNextTickLandsOnAFlapsEdge) {
  ASSERT_TRUE(
      Apply("flap", "link_flap",
            {{"interface", "fab0"}, {"down", "100ms"}, {"count", 2}, {"period", "1s"}})["ok"]
          .get<bool>());
  EXPECT_FALSE(Fab0().up);
  clock_.Advance(std::chrono::milliseconds(93));
  EXPECT_EQ(service_->TickInterval(), std::chrono::milliseconds(7));  // the up edge
  clock_.Advance(std::chrono::milliseconds(7));
  service_->Tick();
  EXPECT_TRUE(Fab0().up);
  clock_.Advance(std::chrono::milliseconds(890));
  EXPECT_EQ(service_->TickInterval(), std::chrono::milliseconds(10));  // the next down edge
  clock_.Advance(std::chrono::milliseconds(10));
  service_->Tick();
  EXPECT_FALSE(Fab0().up);
  clock_.Advance(std::chrono::milliseconds(100));
  service_->Tick();
  EXPECT_TRUE(Fab0().up);
  EXPECT_EQ(service_->TickInterval(), AgentService::kIdleTick);  // no edge left; still in force
}

// The tick loop can wake microseconds before a flap's up edge: Tick sees
// the edge still ahead and keeps the link down, and by the time the loop
// asks when to wake next the edge is behind. It is due at once — not on the
// next idle tick, which made a 100 ms flap last 197.7 ms on the wire in 1
// of ~200 (bench/agent_bench.sh). A change the last tick already tried and
// that is overdue keeps the cadence (no spinning).
TEST_F(FakeHostServiceTest, AnEdgeThatPassedSinceTheLastTickIsDueAtOnce) {
  using std::chrono::microseconds;
  ASSERT_TRUE(
      Apply("flap", "link_flap", {{"interface", "fab0"}, {"down", "100ms"}})["ok"].get<bool>());
  clock_.Advance(microseconds(99'990));
  service_->Tick();
  EXPECT_FALSE(Fab0().up);  // 10 us early: still down
  clock_.Advance(microseconds(20));
  EXPECT_EQ(service_->TickInterval(), Duration::zero());
  service_->Tick();
  EXPECT_TRUE(Fab0().up);
  EXPECT_EQ(service_->TickInterval(), AgentService::kIdleTick);  // the flap is over
}

TEST_F(FakeHostServiceTest, TheManagementInterfaceIsStillRefused) {
  Json r = Apply("cut", "link_down", {{"interface", "mgmt0"}});
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_EQ(kernel_.mutations(), 0u);
}

TEST_F(FakeHostServiceTest, ProcessFaultsFindNothingToTouch) {
  Json r = Apply("hog", "cpu_hog", {{"threads", 1}});
  EXPECT_FALSE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(service_->active_faults(), 0u);
}

TEST(FakeHostKernelTest, CountersSampleAnswersZeros) {
  FakeHostKernel kernel;
  auto c = SampleCounters(kernel, nullptr, "mgmt0");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)["fab0.rx_bytes"], 0);
  EXPECT_EQ((*c)["fab0.qdisc_drops"], 0);
  EXPECT_FALSE(c->contains("mgmt0.rx_bytes"));
  EXPECT_EQ(kernel.mutations(), 0u);  // queries are not recorded as faults
}

// The agent reads the model through FakeHostNetStack; what it reads must be
// what the iproute2 stack reads from the same model's JSON answers.
TEST(FakeHostNetStackTest, ReadsWhatTheIprouteStackReadsFromTheSameModel) {
  FakeHostKernel kernel;
  FakeHostNetStack fake(kernel);
  IprouteNetStack iproute(&kernel);
  auto same = [&](const std::string& when) {
    SCOPED_TRACE(when);
    auto a = fake.Links(), b = iproute.Links();
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a->size(), b->size());
    for (size_t i = 0; i < a->size(); ++i) {
      EXPECT_EQ((*a)[i].name, (*b)[i].name);
      EXPECT_EQ((*a)[i].admin_up, (*b)[i].admin_up);
      EXPECT_EQ((*a)[i].operstate, (*b)[i].operstate);
    }
    for (const char* dev : {"fab0", "mgmt0", "nope0"}) {
      auto q = fake.Qdiscs(dev), r = iproute.Qdiscs(dev);
      ASSERT_EQ(q.ok(), r.ok()) << dev;
      if (q.ok()) {
        EXPECT_EQ(*q, *r) << dev;
      } else {
        EXPECT_EQ(q.status().code(), r.status().code());
      }
      auto n = fake.Neighbours(dev), m = iproute.Neighbours(dev);
      ASSERT_EQ(n.ok(), m.ok()) << dev;
      if (n.ok()) {
        EXPECT_EQ(*n, *m) << dev;
      }
    }
    auto c = fake.RootCounters(), d = iproute.RootCounters();
    ASSERT_TRUE(c.ok() && d.ok());
    ASSERT_EQ(c->size(), d->size());
    for (size_t i = 0; i < c->size(); ++i) EXPECT_EQ((*c)[i].dev, (*d)[i].dev);
    EXPECT_EQ(*fake.RouteDevice("198.18.0.9"), *iproute.RouteDevice("198.18.0.9"));
  };
  same("at start");
  ASSERT_TRUE(fake.Apply(NetChange::Tbf("fab0", "", "fd1:", 100'000'000, 32768,
                                        std::chrono::milliseconds(50)))
                  .ok());
  ASSERT_TRUE(
      fake.Apply(NetChange::NeighReplace("fab0", "198.18.0.2", "02:fd:00:00:01:02", true)).ok());
  ASSERT_TRUE(
      fake.Apply(NetChange::NeighReplace("fab0", "198.18.0.3", "02:fd:00:00:01:03", false)).ok());
  same("with a tbf and two neighbours");
  EXPECT_EQ((*fake.Qdiscs("fab0"))[0].options["rate"], 12'500'000);
  EXPECT_EQ((*fake.Neighbours("fab0")).size(), 2u);
  ASSERT_TRUE(fake.Apply(NetChange::LinkUp("fab0", false)).ok());
  same("with fab0 down");
  EXPECT_TRUE(fake.Neighbours("fab0")->empty());  // a down flushes them, as the kernel does
  // Changes are the iproute2 commands, recorded; one the model refuses fails.
  EXPECT_EQ(kernel.recorded().back(),
            (std::vector<std::string>{"ip", "link", "set", "dev", "fab0", "down"}));
  ASSERT_TRUE(fake.Apply(NetChange::DeleteRootQdisc("fab0")).ok());
  Status again = fake.Apply(NetChange::DeleteRootQdisc("fab0"));
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("handle of zero"), std::string::npos) << again.message();
  EXPECT_EQ(fake.Qdiscs("nope0").status().code(), StatusCode::kNotFound);
}

// The fake machine's agents sample through /proc/net/dev and the net stack,
// as a real node's does; the sample is the one `ip -s -j link` gave.
TEST(FakeHostNetStackTest, TheAgentsCountersSampleIsTheIprouteOne) {
  FakeHost fake;
  Host host = fake.host();
  ASSERT_EQ(host.net, &fake.net);
  auto dev = fake.sysfs.Read("/proc/net/dev");
  ASSERT_TRUE(dev.ok()) << dev.status().ToString();
  EXPECT_NE(dev->find("fab0: 0 0"), std::string::npos) << *dev;
  auto through_stack = SampleCounters(*host.runner, host.sysfs, "mgmt0", host.net);
  auto through_tools = SampleCounters(fake.kernel, nullptr, "mgmt0");
  ASSERT_TRUE(through_stack.ok()) << through_stack.status().ToString();
  ASSERT_TRUE(through_tools.ok()) << through_tools.status().ToString();
  EXPECT_EQ(*through_stack, *through_tools);
  EXPECT_TRUE(through_stack->contains("fab0.tx_bytes"));
  EXPECT_FALSE(through_stack->contains("mgmt0.rx_bytes"));
  EXPECT_EQ(fake.kernel.mutations(), 0u);
}

TEST(FakeHostKernelTest, KeepsABoundedRecordButCountsEveryMutation) {
  FakeHostKernel kernel;
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(kernel.Run({"ip", "link", "set", "dev", "fab0", "up"}, {}).ok());
  EXPECT_EQ(kernel.mutations(), 100u);
  EXPECT_EQ(kernel.recorded().size(), FakeHostKernel::kMaxRecorded);
}

TEST(FakeAgentAddressTest, SkipsNetworkAndBroadcastHostParts) {
  EXPECT_EQ(FakeAgentAddress("127.1.0.1", 0), "127.1.0.1");
  EXPECT_EQ(FakeAgentAddress("127.1.0.1", 253), "127.1.0.254");
  EXPECT_EQ(FakeAgentAddress("127.1.0.1", 254), "127.1.1.1");
  EXPECT_EQ(FakeAgentAddress("127.1.0.1", 9999), "127.1.39.94");
  EXPECT_EQ(FakeAgentAddress("127.255.255.254", 1), "");  // would leave 127/8
  EXPECT_EQ(FakeAgentAddress("127.1.0.0", 0), "");
  EXPECT_EQ(FakeAgentAddress("not an address", 0), "");
}

// A blocking plaintext client speaking the wire protocol.
class WireClient {
 public:
  WireClient(const std::string& host, uint16_t port) : socket_(io_) {
    for (int i = 0; i < 100; ++i) {  // the fleet is starting in the child
      boost::system::error_code ec;
      socket_.connect({boost::asio::ip::make_address(host), port}, ec);
      if (!ec) return;
      socket_.close();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  Json Call(const std::string& type, Json body = Json::object()) {
    uint64_t id = ++id_;
    boost::asio::write(socket_,
                       boost::asio::buffer(EncodeFrame(MakeRequest(type, id, std::move(body)))));
    for (;;) {
      auto m = decoder_.Next();
      if (!m.ok()) return Json{{"ok", false}, {"error", m.status().ToString()}};
      if (m->has_value()) {
        if ((**m).value("id", uint64_t{0}) == id) return **m;
        continue;  // a push
      }
      char buf[4096];
      boost::system::error_code ec;
      size_t n = socket_.read_some(boost::asio::buffer(buf), ec);
      if (ec) return Json{{"ok", false}, {"error", ec.message()}};
      decoder_.Feed(std::string_view(buf, n));
    }
  }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  FrameDecoder decoder_;
  uint64_t id_ = 0;
};

// Three agents in one process: each answers on its own address as its own
// node, and each lease is its own (one lapsing reverts only that agent).
TEST(FakeFleetTest, EachAgentHasItsOwnAddressNodeAndLease) {
  const auto dir = ScratchPath(kDirPrefix);
  std::filesystem::create_directories(dir);
  FakeFleetConfig c;
  c.agents = 3;
  c.first_address = "127.77.0.1";
  c.port = static_cast<uint16_t>(20000 + getpid() % 20000);
  c.state_dir = dir.string();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(RunFakeFleet(c));

  // However the test ends, the fleet does too (a failed check throws past
  // the kill below).
  struct Reap {
    pid_t pid;
    ~Reap() {
      if (pid <= 0) return;
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reap{child};

  WireClient a0(FakeAgentAddress(c.first_address, 0), c.port);
  WireClient a1(FakeAgentAddress(c.first_address, 1), c.port);
  WireClient a2(FakeAgentAddress(c.first_address, 2), c.port);
  EXPECT_EQ(a0.Call("hello")["node"], "f0");
  EXPECT_EQ(a2.Call("hello")["node"], "f2");
  Json rate = {{"kind", "link_rate"}, {"params", {{"interface", "fab0"}, {"rate", "100mbit"}}}};
  Json apply = rate;
  apply["fault_id"] = "x";
  ASSERT_TRUE(a0.Call("lease", {{"ttl_ms", 60000}})["ok"].get<bool>());  // outlives the test
  EXPECT_TRUE(a0.Call("apply", apply)["verified"].get<bool>());
  Json brief = rate;  // on a1, ended by the fleet's ticker at its max duration
  brief["fault_id"] = "brief";
  brief["max_duration_ms"] = 150;
  ASSERT_TRUE(a1.Call("lease", {{"ttl_ms", 60000}})["ok"].get<bool>());
  EXPECT_TRUE(a1.Call("apply", brief)["verified"].get<bool>());
  ASSERT_TRUE(a2.Call("lease", {{"ttl_ms", 200}})["ok"].get<bool>());
  EXPECT_TRUE(a2.Call("apply", apply)["verified"].get<bool>());
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // a2's lease lapses, a0's holds
  EXPECT_EQ(a2.Call("hello")["active_faults"], 0);
  EXPECT_EQ(a1.Call("hello")["active_faults"], 0);
  EXPECT_EQ(a0.Call("hello")["active_faults"], 1);

  kill(child, SIGTERM);  // reverts every agent's faults, then exits 0
  int status = 0;
  waitpid(child, &status, 0);
  reap.pid = 0;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(Journal((dir / "f0" / "journal.jsonl").string()).Pending()->empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fdrill

// SampleTelemetry: IB port counters from sysfs (the *_data ones in bytes),
// NVLink counters from NVML field values, merged with the netdev sample; the
// agent's telemetry interval.
#include <set>

#include <gtest/gtest.h>

#include "agents/counters.h"
#include "agents/counters_delta.h"
#include "agents/tcp_link_retrans.h"
#include "common/core/units.h"
#include "common/wire/counter_samples.h"
#include "tests/agents/test_agent.h"
#include "tests/fakes/fake_host.h"
#include "tests/fakes/fake_nvml.h"
#include "tests/fakes/fake_processes.h"
#include "tests/fakes/fake_tcp_sockets.h"

namespace fdrill {
namespace {

constexpr char kPort[] = "/sys/class/infiniband/mlx5_0/ports/1";

FakeSysFs IbPort() {
  FakeSysFs fs;
  // No link_error_recovery file: left out.
  fs.SetAttrs(std::string(kPort) + "/counters", {{"port_xmit_data", "1000"},  // 4-octet units
                                                 {"port_rcv_data", "2500"},
                                                 {"port_xmit_packets", "30"},
                                                 {"port_rcv_packets", "40"},
                                                 {"symbol_error", "3"},
                                                 {"link_downed", "1"},
                                                 {"port_xmit_wait", "77"}});
  fs.SetAttrs(std::string(kPort) + "/hw_counters",
              {{"out_of_buffer", "9"},
               {"np_cnp_sent", "12"},
               {"lifespan", "10"}});  // lifespan: a setting (ms), not a counter
  fs.SetAttrs("/sys/class/infiniband/mlx5_1/ports/2/counters", {{"port_rcv_errors", "5"}});
  return fs;
}

TEST(TelemetryTest, IbPortCountersWithDataInBytes) {
  FakeSysFs fs = IbPort();
  Json out = Json::object();
  SampleIbCounters(fs, "/sys/class/infiniband", out);
  EXPECT_EQ(out["ib/mlx5_0/1.port_xmit_data"], 4000);  // x4: the PMA counts 4-octet words
  EXPECT_EQ(out["ib/mlx5_0/1.port_rcv_data"], 10000);
  EXPECT_EQ(out["ib/mlx5_0/1.port_xmit_packets"], 30);  // packets are packets
  EXPECT_EQ(out["ib/mlx5_0/1.port_rcv_packets"], 40);
  EXPECT_EQ(out["ib/mlx5_0/1.symbol_error"], 3);
  EXPECT_EQ(out["ib/mlx5_0/1.link_downed"], 1);
  EXPECT_EQ(out["ib/mlx5_0/1.port_xmit_wait"], 77);
  EXPECT_FALSE(out.contains("ib/mlx5_0/1.link_error_recovery"));
  EXPECT_EQ(out["ib/mlx5_0/1.out_of_buffer"], 9);
  EXPECT_EQ(out["ib/mlx5_0/1.np_cnp_sent"], 12);
  EXPECT_FALSE(out.contains("ib/mlx5_0/1.lifespan"));
  EXPECT_EQ(out["ib/mlx5_1/2.port_rcv_errors"], 5);
}

TEST(TelemetryTest, NoInfinibandTreeNoIbCounters) {
  FakeSysFs fs;
  Json out = Json::object();
  SampleIbCounters(fs, "/sys/class/infiniband", out);
  EXPECT_TRUE(out.empty());
}

TEST(TelemetryTest, NvLinkCountersFromFieldValues) {
  FakeNvml fake;
  fake.Node(2);
  fake.NvLinkField(0, 0, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, 3);  // KiB
  fake.NvLinkField(0, 0, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, 5);
  fake.NvLinkField(0, 0, NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY, 2);
  fake.NvLinkField(0, 0, NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY, 1);
  fake.NvLinkField(0, 0, NVML_FI_DEV_NVLINK_ERROR_DL_CRC, 4);
  fake.NvLinkField(0, 17, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, 1);
  fake.NvLinkField(1, 3, NVML_FI_DEV_NVLINK_ERROR_DL_CRC, 8);
  fake.ClearCalls();
  Json out = Json::object();
  SampleNvLinkCounters(NvmlAt(NvmlLibraryPath()), out);
  EXPECT_EQ(out["gpu0/nvlink0.tx_bytes"], 3 * 1024);
  EXPECT_EQ(out["gpu0/nvlink0.rx_bytes"], 5 * 1024);
  EXPECT_EQ(out["gpu0/nvlink0.dl_replay"], 2);
  EXPECT_EQ(out["gpu0/nvlink0.dl_recovery"], 1);
  EXPECT_EQ(out["gpu0/nvlink0.dl_crc"], 4);
  EXPECT_EQ(out["gpu0/nvlink17.tx_bytes"], 1024);
  EXPECT_FALSE(out.contains("gpu0/nvlink17.rx_bytes"));  // NOT_SUPPORTED: left out
  EXPECT_EQ(out["gpu1/nvlink3.dl_crc"], 8);
  EXPECT_EQ(out.size(), 7u);  // 5 + 1 + 1: nothing NVML did not answer
  int field_calls = 0;
  for (const auto& c : fake.Calls()) field_calls += c.rfind("nvmlDeviceGetFieldValues", 0) == 0;
  EXPECT_EQ(field_calls, 2);  // one batched call per GPU
}

TEST(TelemetryTest, OneSampleMergesNetdevIbAndNvLink) {
  FakeNvml fake;
  fake.Node(1);
  fake.NvLinkField(0, 1, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, 7);
  FakeSysFs fs = IbPort();
  fs.files["/proc/net/dev"] =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
      "drop fifo colls "
      "carrier compressed\n"
      "  fab0: 100 1 0 0 0 0 0 0 200 2 0 0 0 0 0 0\n";
  FakeProcessRunner runner;
  runner.OnOutput({"tc"}, "[]");
  FakeTcpSockets sockets;
  sockets.addresses = {{"fab0", "198.18.0.2"}};
  sockets.sockets = {
      {.cookie = 1, .local = "198.18.0.2", .remote = "198.18.0.3", .total_retrans = 4}};
  TcpLinkRetrans retrans(sockets);
  auto s = SampleTelemetry(
      runner, &fs, {"mgmt0", "/sys/class/infiniband", &NvmlAt(NvmlLibraryPath()), &retrans});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)["fab0.rx_bytes"], 100);
  EXPECT_EQ((*s)["fab0.tcp_retrans_segs"], 4);
  EXPECT_EQ((*s)["ib/mlx5_0/1.port_rcv_data"], 10000);
  EXPECT_EQ((*s)["gpu0/nvlink1.rx_bytes"], 7 * 1024);
}

TEST(TelemetryTest, IbCountersStillCountWhenTheNetdevSampleFails) {
  FakeSysFs fs = IbPort();
  FakeProcessRunner runner;
  runner.OnFail({"ip"}, "ip: not found", 127);
  auto s = SampleTelemetry(runner, &fs, {"mgmt0", "/sys/class/infiniband", nullptr});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)["ib/mlx5_0/1.port_xmit_data"], 4000);

  FakeSysFs empty;
  EXPECT_FALSE(SampleTelemetry(runner, &empty, {"mgmt0", "/sys/class/infiniband", nullptr}).ok());
}

TEST(TelemetryTest, IntervalParsesDurationsInItsRange) {
  EXPECT_EQ(*ParseTelemetryInterval("250ms"), std::chrono::milliseconds(250));
  EXPECT_EQ(*ParseTelemetryInterval("1s"), std::chrono::seconds(1));
  EXPECT_EQ(*ParseTelemetryInterval("10s"), std::chrono::seconds(10));
  EXPECT_EQ(*ParseTelemetryInterval("100ms"), std::chrono::milliseconds(100));
  EXPECT_EQ(*ParseTelemetryInterval("1h"), std::chrono::hours(1));
  auto fast = ParseTelemetryInterval("50ms");
  ASSERT_FALSE(fast.ok());
  EXPECT_NE(fast.status().message().find("from 100ms to 1h"), std::string::npos)
      << fast.status().message();
  EXPECT_FALSE(ParseTelemetryInterval("2h").ok());
  EXPECT_FALSE(ParseTelemetryInterval("10").ok());  // a bare number has no unit
  EXPECT_FALSE(ParseTelemetryInterval("fast").ok());
}

// Each node samples on a grid of its own: points `every` apart, the latest
// at or before now, and the phase differs between nodes (a drill's nodes do
// not all push in the same instant).
TEST(TelemetryTest, EachNodeSamplesOnAGridOfItsOwn) {
  using std::chrono::milliseconds;
  const Duration every = std::chrono::seconds(1);
  const auto t0 = std::chrono::steady_clock::time_point(std::chrono::hours(100));
  std::set<int64_t> phases;
  for (int i = 0; i < 20; ++i) {
    const std::string node = "gpu" + std::to_string(i);
    const auto p = SampleGridPoint(t0, every, node);
    EXPECT_LE(p, t0);
    EXPECT_GT(p, t0 - every);
    // The same point from anywhere up to the next one; that one is `every` on.
    EXPECT_EQ(SampleGridPoint(p + milliseconds(999), every, node), p);
    EXPECT_EQ(SampleGridPoint(p + every, every, node), p + every);
    phases.insert((t0 - p).count());
  }
  EXPECT_GT(phases.size(), 15u);  // spread, not one instant
}

// The agent pushes one `counters` event per interval while it watches a
// workload's metrics, on the interval's grid: a whole sample, then what
// changed, which the receiving end (CounterSamples) makes whole again.
int CountersPushedIn(Duration interval, Duration watched) {
  FakeHostAgent agent("f1", "fdrill-telemetry-",
                      [&](AgentConfig& c) { c.telemetry_interval = interval; });
  int pushed = 0;
  Json last;
  CounterSamples received;
  agent.service->set_push([&](Json m) {
    if (m["type"] == "counters") {
      EXPECT_EQ(m.value("delta", false), pushed % CountersDelta::kFullEvery != 0) << m.dump();
      ++pushed;
      auto whole = received.Apply("f1", m);
      ASSERT_TRUE(whole) << m.dump();
      EXPECT_EQ(*whole, agent.service->latest_telemetry());
      last = *whole;
    }
  });
  Json r = agent.Call("workload_start", {{"metrics_dir", (agent.dir / "metrics").string()}});
  EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
  for (Duration t{}; t <= watched; t += std::chrono::milliseconds(50)) {
    agent.service->Tick();
    agent.clock.Advance(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(last.contains("fab0.rx_bytes")) << last.dump();
  EXPECT_TRUE(last.contains("ib/mlx5_0/1.port_xmit_data")) << last.dump();  // the fake host's HCA
  return pushed;
}

TEST(TelemetryTest, AgentPushesAtItsTelemetryInterval) {
  EXPECT_EQ(CountersPushedIn(std::chrono::milliseconds(250), std::chrono::seconds(1)),
            5);  // 0, .25, .5, .75, 1
  EXPECT_EQ(CountersPushedIn(std::chrono::seconds(1), std::chrono::seconds(1)), 2);  // 0, 1
  EXPECT_EQ(AgentConfig{}.telemetry_interval, std::chrono::seconds(1));
}

// A receiver that joins (a session past its handshake) and a drill that
// takes the lease anew get a whole sample next; renewals keep the deltas.
TEST(TelemetryTest, AWholeCountersSampleForEveryNewReceiver) {
  FakeHostAgent fake("f1", "fdrill-telemetry-");
  std::vector<Json> pushes;
  fake.service->set_push([&](Json m) {
    if (m["type"] == "counters") pushes.push_back(m);
  });
  auto lease = [&](const std::string& drill) {
    Json r = fake.service->Handle(MakeRequest("lease", 1, {{"ttl_ms", 86400000}, {"drill", drill}}),
                                  "test");
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  };
  auto tick = [&] {
    fake.clock.Advance(std::chrono::seconds(1));
    fake.service->Tick();
  };
  auto delta = [&] { return pushes.back().value("delta", false); };
  ASSERT_TRUE(fake.Call("lease", {{"ttl_ms", 0}})["ok"].get<bool>());  // the fixture's own
  lease("d1");
  tick();
  EXPECT_FALSE(delta());
  tick();
  EXPECT_TRUE(delta());
  lease("d1");  // a renewal
  tick();
  EXPECT_TRUE(delta());
  fake.service->ReceiverJoined();
  tick();
  EXPECT_FALSE(delta());
  tick();
  EXPECT_TRUE(delta());
  ASSERT_TRUE(
      fake.service->Handle(MakeRequest("lease", 2, {{"ttl_ms", 0}, {"drill", "d1"}}), "test")["ok"]
          .get<bool>());
  lease("d2");  // another drill's controller
  tick();
  EXPECT_FALSE(delta());
  EXPECT_EQ(pushes.size(), 6u);
}

// A renewal that asks to be acknowledged by push (proto::key::kAck) gets no
// reply: the agent's next counters push carries its number, and when no
// counters push goes within ack_within_ms (here the interval is 5 s), a
// lease_ack push of its own does, at that time. A refusal still replies,
// and a malformed ack is refused before the lease is touched.
TEST(TelemetryTest, ARenewalIsAcknowledgedInTheNextPushNotReplied) {
  using std::chrono::milliseconds;
  for (const Duration interval :
       {Duration(std::chrono::seconds(1)), Duration(std::chrono::seconds(5))}) {
    SCOPED_TRACE(FormatDuration(interval));
    FakeHostAgent fake("f1", "fdrill-telemetry-",
                       [&](AgentConfig& c) { c.telemetry_interval = interval; });
    std::vector<Json> pushes;
    fake.service->set_push([&](Json m) {
      if (m.contains("lease_ack")) pushes.push_back(m);
    });
    auto renew = [&](uint64_t renewal, uint64_t within_ms) {
      return fake.service->Handle(MakeRequest("lease", 10 + renewal,
                                              {{"ttl_ms", 86400000},
                                               {"ack", "push"},
                                               {"renewal", renewal},
                                               {"ack_within_ms", within_ms}}),
                                  "test");
    };
    fake.service->Tick();  // the first sample, pushed at once
    EXPECT_TRUE(renew(1, 1000).is_null());
    EXPECT_LE(fake.service->TickInterval(), milliseconds(1001));
    // Ticks every 100 ms: the ack goes with the first push due, by 1 s.
    for (int k = 0; k < 10 && pushes.empty(); ++k) {
      fake.clock.Advance(milliseconds(100));
      fake.service->Tick();
    }
    ASSERT_EQ(pushes.size(), 1u);
    EXPECT_EQ(pushes[0]["lease_ack"], 1u);
    EXPECT_EQ(pushes[0]["type"], interval == std::chrono::seconds(1) ? "counters" : "lease_ack");
    EXPECT_EQ(pushes[0]["node"], "f1");
    EXPECT_EQ(pushes[0]["drill"], "");  // whose renewal: the lease's drill
    // Owed once: later pushes carry nothing until the next renewal.
    for (int k = 0; k < 60; ++k) {
      fake.clock.Advance(milliseconds(100));
      fake.service->Tick();
    }
    EXPECT_EQ(pushes.size(), 1u);
    // Two renewals before a push: the later number, by the earlier's time.
    EXPECT_TRUE(renew(2, 1000).is_null());
    fake.clock.Advance(milliseconds(600));
    EXPECT_TRUE(renew(3, 1000).is_null());
    fake.clock.Advance(milliseconds(400));
    fake.service->Tick();
    ASSERT_EQ(pushes.size(), 2u);
    EXPECT_EQ(pushes[1]["lease_ack"], 3u);
  }
  FakeHostAgent fake("f1", "fdrill-telemetry-");
  // Malformed: refused, and the lease the fixture holds is as it was.
  Json bad = fake.service->Handle(
      MakeRequest("lease", 1, {{"ttl_ms", 5000}, {"ack", "push"}, {"renewal", 1}}), "test");
  ASSERT_FALSE(bad.is_null());
  EXPECT_FALSE(bad["ok"].get<bool>());
  EXPECT_NE(bad["error"].get<std::string>().find("ack_within_ms"), std::string::npos);
  // Another drill's renewal is refused with a reply, as always.
  Json other = fake.service->Handle(MakeRequest("lease", 2,
                                                {{"ttl_ms", 5000},
                                                 {"drill", "other"},
                                                 {"ack", "push"},
                                                 {"renewal", 1},
                                                 {"ack_within_ms", 1000}}),
                                    Caller{.peer = "test", .subject = "another-controller"});
  ASSERT_FALSE(other.is_null());
  EXPECT_FALSE(other["ok"].get<bool>()) << other.dump();
}

// Issue 25: the ranks' CPU seconds come from a /proc scan on the first
// sample and every RankCpu::kRescanEvery after, and on every sample after a
// workload_start until the run's ranks show; in between only their stat.
TEST(TelemetryTest, AWorkloadStartLooksForItsRanksEverySampleUntilFound) {
  FakeHostAgent fake("f1", "fdrill-telemetry-");
  FakeProcessTable procs;
  Host host = fake.fake.host();
  host.procs = &procs;
  std::filesystem::create_directories(fake.dir / "ranks");
  AgentService agent(TestAgentConfig("f1", fake.dir / "ranks"), host, fake.clock);
  ASSERT_TRUE(
      agent.Handle(MakeRequest("lease", 1, {{"ttl_ms", 86400000}}), "test")["ok"].get<bool>());
  std::vector<Json> samples;
  agent.set_push([&](Json m) {
    if (m["type"] == "counters") samples.push_back(m["counters"]);
  });
  auto tick = [&] {
    fake.clock.Advance(std::chrono::seconds(1));
    agent.Tick();
  };
  tick();
  tick();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(procs.pid_lists, 1);
  const std::string run = (fake.dir / "run").string();
  ASSERT_TRUE(agent.Handle(MakeRequest("workload_start", 2, {{"metrics_dir", run}}), "test")["ok"]
                  .get<bool>());
  tick();
  tick();
  EXPECT_EQ(procs.pid_lists, 3);
  procs.AddRank(1234, 0).cpu_ticks = 50;
  tick();
  EXPECT_EQ(procs.pid_lists, 4);
  EXPECT_TRUE(samples.back().contains("rank/0.cpu_seconds")) << samples.back().dump();
  tick();
  EXPECT_EQ(procs.pid_lists, 4);
  EXPECT_EQ(procs.stats, std::vector<int>{1234});
}

}  // namespace
}  // namespace fdrill

// PlanRasWatches: which nodes watch an NCCL job's RAS service during a
// drill and with what ras_watch body — every node of each NCCL workload, at
// the job's NCCL_RAS_ADDR or NCCL's default, for the drill's length and a
// minute; none for an MPI job or NCCL_RAS_ENABLE=0; a malformed variable is
// an error naming the workload before anything is touched. The job's
// environment is the test's own array, not this process's.
#include "harness/controller/ras_watches.h"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/wire/protocol.h"

namespace fdrill {
namespace {

Scenario Load(const std::string& yaml) {
  auto s = ParseScenario(yaml, "drill.yaml");
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

std::string Drill(const std::string& workload) {
  return "name: t\nfabric: {emulated: {nodes: 2}}\n" + workload +
         "\nphases:\n  - {name: baseline, duration: 3s}\n  - {name: end, duration: 2s}\n";
}

// An environment array as environ is: NAME=VALUE strings, null-terminated.
class Env {
 public:
  explicit Env(std::vector<std::string> vars) : vars_(std::move(vars)) {
    for (auto& v : vars_) ptrs_.push_back(v.data());
    ptrs_.push_back(nullptr);
  }
  char** get() { return ptrs_.data(); }

 private:
  std::vector<std::string> vars_;
  std::vector<char*> ptrs_;
};

// An NCCL job: both its nodes watch NCCL's default address once a second,
// for the drill's 5 s and a minute.
TEST(RasWatches, AnNcclJobsNodesWatchTheDefaultAddress) {
  const Scenario s = Load(Drill("workload: {backend: nccl, size: 4K}"));
  Env env({"PATH=/usr/bin"});
  auto plans = PlanRasWatches(s, env.get());
  ASSERT_TRUE(plans.ok()) << plans.status().message();
  ASSERT_EQ(plans->size(), 1u);
  const RasWatchPlan& p = plans->front();
  EXPECT_EQ(p.nodes, (std::vector<std::string>{"n0", "n1"}));
  EXPECT_EQ(p.body[proto::key::kRasAddr], "localhost:28028");
  EXPECT_EQ(p.body[proto::key::kIntervalMs], 1000);
  EXPECT_EQ(p.body[proto::key::kForMs], 65000);
}

// The job's own NCCL_RAS_ADDR is where its nodes look.
TEST(RasWatches, TheJobsOwnAddressIsWatched) {
  const Scenario s = Load(Drill("workload: {backend: nccl, size: 4K}"));
  Env env({"NCCL_RAS_ADDR=127.0.0.1:29000"});
  auto plans = PlanRasWatches(s, env.get());
  ASSERT_TRUE(plans.ok()) << plans.status().message();
  ASSERT_EQ(plans->size(), 1u);
  EXPECT_EQ(plans->front().body[proto::key::kRasAddr], "127.0.0.1:29000");
}

// No NCCL, or RAS turned off: no watch.
TEST(RasWatches, AnMpiJobOrRasOffWatchesNothing) {
  Env none({});
  auto mpi = PlanRasWatches(Load(Drill("workload: {size: 4K}")), none.get());
  ASSERT_TRUE(mpi.ok());
  EXPECT_TRUE(mpi->empty());
  Env off({"NCCL_RAS_ENABLE=0"});
  auto disabled = PlanRasWatches(Load(Drill("workload: {backend: nccl, size: 4K}")), off.get());
  ASSERT_TRUE(disabled.ok());
  EXPECT_TRUE(disabled->empty());
}

// A malformed variable is refused, naming it and what the watch is for.
TEST(RasWatches, AMalformedAddressIsAnErrorNamingTheWatch) {
  Env env({"NCCL_RAS_ADDR=localhost"});
  auto plans = PlanRasWatches(Load(Drill("workload: {backend: nccl, size: 4K}")), env.get());
  ASSERT_FALSE(plans.ok());
  EXPECT_EQ(plans.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plans.status().message().find("workload (the NCCL RAS watch)"), std::string::npos)
      << plans.status().message();
  EXPECT_NE(plans.status().message().find("NCCL_RAS_ADDR: expected host:port"), std::string::npos)
      << plans.status().message();
}

// Tenants: each NCCL tenant its own watch on its own nodes; the MPI one none.
TEST(RasWatches, EachNcclTenantWatchesOnItsOwnNodes) {
  const Scenario s = Load(R"(name: t
fabric: {emulated: {nodes: 4}}
workloads:
  a: {nodes: "n[0-1]", size: 4K, backend: nccl}
  b: {nodes: "n[2-3]", size: 4K}
phases:
  - {name: baseline, duration: 3s}
  - {name: end, duration: 2s}
)");
  Env env({});
  auto plans = PlanRasWatches(s, env.get());
  ASSERT_TRUE(plans.ok()) << plans.status().message();
  ASSERT_EQ(plans->size(), 1u);
  EXPECT_EQ(plans->front().nodes, (std::vector<std::string>{"n0", "n1"}));
}

}  // namespace
}  // namespace fdrill

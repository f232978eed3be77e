// NCCL's time from a dead IB/RoCE link to an error (harness/scenario/
// nccl_ib_timeout.h): 4.096 us x 2^NCCL_IB_TIMEOUT x (NCCL_IB_RETRY_CNT + 1).
#include "harness/scenario/nccl_ib_timeout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fdrill {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

double Seconds(const NcclIbErrorTime& t) { return std::chrono::duration<double>(*t.after).count(); }

TEST(NcclIbTimeout, TheDefaultsGiveAbout34Seconds) {
  auto t = PredictNcclIbError({});
  ASSERT_TRUE(t.ok() && t->after.has_value());
  EXPECT_NEAR(Seconds(*t), 4.096e-6 * 1048576 * 8, 1e-3);  // 34.36 s
  EXPECT_FALSE(t->timeout_set);
  EXPECT_FALSE(t->retry_set);
}

TEST(NcclIbTimeout, TheEnvironmentSetsBothAndZeroOr32MeansNever) {
  auto t = PredictNcclIbError({{"NCCL_IB_TIMEOUT", "22"}, {"NCCL_IB_RETRY_CNT", "0"}});
  ASSERT_TRUE(t.ok());
  EXPECT_NEAR(Seconds(*t), 4.096e-6 * 4194304, 1e-3);  // 17.18 s: one try
  for (const char* never : {"0", "32", "40"}) {
    auto n = PredictNcclIbError({{"NCCL_IB_TIMEOUT", never}});
    ASSERT_TRUE(n.ok()) << never;
    EXPECT_FALSE(n->after.has_value()) << never;
  }
}

TEST(NcclIbTimeout, ANonsenseValueNamesTheVariable) {
  auto a = PredictNcclIbError({{"NCCL_IB_TIMEOUT", "twenty"}});
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("NCCL_IB_TIMEOUT=\"twenty\""));
  auto b = PredictNcclIbError({{"NCCL_IB_RETRY_CNT", "8"}});
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(),
              HasSubstr("NCCL_IB_RETRY_CNT=\"8\": NCCL takes an integer 0..7"));
}

TEST(NcclIbTimeout, TheJobsEnvironmentIsOursThenMpirunsXThenSrunsExport) {
  std::string a = "NCCL_IB_TIMEOUT=18", b = "PATH=/usr/bin", c = "NCCL_IB_RETRY_CNT=5";
  char* env[] = {a.data(), b.data(), c.data(), nullptr};
  WorkloadSpec w;
  w.launcher_args = {"-x", "NCCL_IB_TIMEOUT=21", "--export=ALL,NCCL_IB_RETRY_CNT=3"};
  auto got = JobNcclEnv(w, env);
  EXPECT_EQ(got, (std::map<std::string, std::string>{{"NCCL_IB_TIMEOUT", "21"},
                                                     {"NCCL_IB_RETRY_CNT", "3"}}));
}

Scenario OneFault(const std::string& kind, Duration phase, Json params) {
  Scenario s;
  PhaseSpec p;
  p.name = "hit";
  p.duration = phase;
  FaultSpec f;
  f.id = "cut";
  f.kind = kind;
  f.node = "n1";
  f.params = std::move(params);
  p.faults.push_back(f);
  s.phases.push_back(p);
  return s;
}

TEST(NcclIbTimeout, ThePlanLineSaysWhetherTheDrillsLinkFaultsOutlastIt) {
  auto t = PredictNcclIbError({});
  ASSERT_TRUE(t.ok());
  const std::string flap = DescribeNcclIbError(
      *t, OneFault("ib_port_flap", 60s, {{"device", "mlx5_0"}, {"down", "3s"}}));
  EXPECT_THAT(flap, HasSubstr("NCCL_IB_TIMEOUT=20 (default), NCCL_IB_RETRY_CNT=7 (default)"));
  EXPECT_THAT(flap, HasSubstr("becomes an error after 4.096 us x 2^20 x 8 = 34.4 s"));
  EXPECT_THAT(flap,
              HasSubstr("fault cut keeps a link down 3 s, shorter: the job should ride through"));
  const std::string down =
      DescribeNcclIbError(*t, OneFault("link_down", 60s, {{"interface", "eth2"}}));
  EXPECT_THAT(down, HasSubstr("keeps a link down 60 s, longer: the job should end in an error"));
  auto never = PredictNcclIbError({{"NCCL_IB_TIMEOUT", "0"}});
  ASSERT_TRUE(never.ok());
  EXPECT_THAT(DescribeNcclIbError(*never, OneFault("link_down", 60s, {})),
              HasSubstr("hangs the job"));
}

TEST(NcclIbTimeout, EachLinkDownFaultOfAnRdmaJobIsPredictedToRideThroughErrorOrHang) {
  auto t = PredictNcclIbError({});
  ASSERT_TRUE(t.ok());
  Scenario s = OneFault("ib_port_flap", 60s, {{"device", "mlx5_0"}, {"down", "3s"}});
  PhaseSpec p2;
  p2.name = "long";
  p2.duration = 60s;
  FaultSpec down;
  down.id = "dead";
  down.kind = "link_down";
  down.node = "n2";
  p2.faults.push_back(down);
  FaultSpec cap;
  cap.id = "cap";
  cap.kind = "link_rate";
  cap.node = "n2";
  p2.faults.push_back(cap);
  s.phases.push_back(p2);
  s.workload.backend = "nccl";  // transport auto: rdma
  EXPECT_EQ(PredictJobOutcomes(*t, s),
            (std::map<std::string, std::string>{{"cut", "rode_through"}, {"dead", "error"}}));
  auto never = PredictNcclIbError({{"NCCL_IB_TIMEOUT", "32"}});
  ASSERT_TRUE(never.ok());
  EXPECT_EQ(PredictJobOutcomes(*never, s).at("dead"), "hang");
  // NCCL's IB timeout says nothing of a job over sockets.
  s.workload.transport = "tcp";
  EXPECT_TRUE(PredictJobOutcomes(*t, s).empty());
}

}  // namespace
}  // namespace fdrill

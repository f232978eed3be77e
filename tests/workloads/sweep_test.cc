// Size lists (nccl-tests' -b/-e/-f/-i) and the per-rank-count plan.
#include "workloads/sweep.h"

#include <gtest/gtest.h>

#include "workloads/plan.h"

namespace fdrill {
namespace {

std::vector<uint64_t> Sizes(uint64_t min, uint64_t max, uint64_t factor = 1,
                            uint64_t step = 1 << 20) {
  Result<std::vector<uint64_t>> sizes = SweepSizes({min, max, factor, step});
  EXPECT_TRUE(sizes.ok()) << sizes.status().message();
  return sizes.ok() ? *sizes : std::vector<uint64_t>{};
}

std::string ErrorOf(uint64_t min, uint64_t max, uint64_t factor = 1, uint64_t step = 1 << 20) {
  Result<std::vector<uint64_t>> sizes = SweepSizes({min, max, factor, step});
  return sizes.ok() ? "<accepted>" : sizes.status().message();
}

TEST(WorkloadSweep, OneSizeWhenMinIsMax) {
  EXPECT_EQ(Sizes(4096, 4096, 2), (std::vector<uint64_t>{4096}));
}

TEST(WorkloadSweep, FactorMultipliesUpToMax) {
  EXPECT_EQ(Sizes(8, 128, 2), (std::vector<uint64_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(Sizes(1024, 1 << 20, 4),
            (std::vector<uint64_t>{1024, 4096, 16384, 65536, 262144, 1048576}));
}

TEST(WorkloadSweep, MaxThatIsNotOnTheStepsIsNotReached) {
  EXPECT_EQ(Sizes(8, 100, 2), (std::vector<uint64_t>{8, 16, 32, 64}));
  EXPECT_EQ(Sizes(1000, 3500, 1, 1000), (std::vector<uint64_t>{1000, 2000, 3000}));
}

TEST(WorkloadSweep, FactorOneAddsStepBytes) {
  EXPECT_EQ(Sizes(4096, 16384, 1, 4096), (std::vector<uint64_t>{4096, 8192, 12288, 16384}));
}

TEST(WorkloadSweep, NoOverflowNearTheTop) {
  const uint64_t top = UINT64_MAX;
  EXPECT_EQ(Sizes(top / 2 + 1, top, 2).size(), 1u);
  EXPECT_EQ(Sizes(top - 10, top, 1, 8).size(), 2u);
}

TEST(WorkloadSweep, ErrorsNameTheFlag) {
  EXPECT_EQ(ErrorOf(4096, 1024, 2),
            "-e/--maxbytes 1024 is less than -b/--minbytes 4096: the sweep runs from -b up to -e");
  EXPECT_EQ(ErrorOf(0, 1024, 2), "-b/--minbytes must be a positive size, not 0");
  EXPECT_EQ(ErrorOf(8, 1024, 0), "-f/--stepfactor must be at least 1 (1: add -i/--stepbytes)");
  EXPECT_NE(ErrorOf(8, 1024, 1, 0).find("-i/--stepbytes must be positive"), std::string::npos);
  EXPECT_NE(ErrorOf(1, 1 << 20, 1, 1).find("more than 1000 sizes"), std::string::npos);
}

Config SweepConfig(Op op, std::vector<uint64_t> sizes) {
  Config c;
  c.op = op;
  c.sizes = std::move(sizes);
  c.iters = 1;
  return c;
}

TEST(WorkloadPlan, OneLayoutPerSizeAndTheLargestBuffers) {
  Result<std::vector<SizeStep>> plan = PlanSizes(SweepConfig(Op::kAllGather, {48, 96, 192}), 3);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->size(), 3u);
  EXPECT_EQ((*plan)[2].bytes, 192u);
  EXPECT_EQ((*plan)[2].layout.count, 16u);
  EXPECT_EQ(MaxSendBytes(*plan, DType::kFloat32), 64u);
  EXPECT_EQ(MaxRecvBytes(*plan, DType::kFloat32), 192u);
}

TEST(WorkloadPlan, RefusesWhatTheRankCountCannotRun) {
  Result<std::vector<SizeStep>> odd = PlanSizes(SweepConfig(Op::kReduceScatter, {48, 64}), 3);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("size 64 B (-b/-e): reduce_scatter on 3 ranks"),
            std::string::npos);

  Config root = SweepConfig(Op::kBroadcast, {64});
  root.root = 2;
  Result<std::vector<SizeStep>> bad_root = PlanSizes(root, 2);
  ASSERT_FALSE(bad_root.ok());
  EXPECT_EQ(bad_root.status().message(), "--root 2 is not a rank: this run has 2 ranks (0..1)");
  root.op = Op::kAllReduce;  // no root: not checked
  EXPECT_TRUE(PlanSizes(root, 2).ok());

  Config half = SweepConfig(Op::kAllReduce, {64});
  half.dtype = DType::kBfloat16;
  Result<std::vector<SizeStep>> too_many = PlanSizes(half, 85);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_many.status().message().find("exact up to 84 ranks, not 85"), std::string::npos);
}

}  // namespace
}  // namespace fdrill

#include "workloads/collective.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

TEST(WorkloadCollective, AllReduceBusFactorIsNcclTests) {
  EXPECT_DOUBLE_EQ(BusFactor(Op::kAllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(BusFactor(Op::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(BusFactor(Op::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(BusFactor(Op::kAllReduce, 8), 1.75);
}

TEST(WorkloadCollective, AlgBandwidthIsBytesPerNanosecond) {
  EXPECT_DOUBLE_EQ(AlgBandwidthGbps(1000000000, 1e9), 1.0);  // 1 GB in 1 s
  EXPECT_DOUBLE_EQ(AlgBandwidthGbps(4194304, 1e6), 4.194304);
  EXPECT_EQ(AlgBandwidthGbps(4096, 0), 0.0);
}

TEST(WorkloadCollective, NamesRoundTrip) {
  EXPECT_EQ(OpName(ParseOp("all_reduce").value()), "all_reduce");
  EXPECT_EQ(DTypeName(ParseDType("float32").value()), "float32");
  EXPECT_EQ(RedOpName(RedOp::kSum), "sum");
  EXPECT_EQ(DTypeSize(DType::kFloat32), 4u);
}

TEST(WorkloadCollective, UnknownNamesListTheAcceptedOnes) {
  Result<Op> op = ParseOp("allreduce");
  ASSERT_FALSE(op.ok());
  EXPECT_EQ(op.status().message(), "unknown --op \"allreduce\": accepted: all_reduce");
  Result<DType> dtype = ParseDType("float");
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.status().message(), "unknown --dtype \"float\": accepted: float32");
}

}  // namespace
}  // namespace fdrill

#include "workloads/collective.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

// nccl-tests' factors (doc/PERFORMANCE.md): 2(n-1)/n, (n-1)/n or 1.
TEST(WorkloadCollective, BusFactorsAreNcclTests) {
  for (int n : {2, 4, 8}) {
    const double ring = static_cast<double>(n - 1) / n;
    EXPECT_DOUBLE_EQ(BusFactor(Op::kAllReduce, n), 2 * ring) << n;
    EXPECT_DOUBLE_EQ(BusFactor(Op::kAllGather, n), ring) << n;
    EXPECT_DOUBLE_EQ(BusFactor(Op::kReduceScatter, n), ring) << n;
    EXPECT_DOUBLE_EQ(BusFactor(Op::kAllToAll, n), ring) << n;
    EXPECT_DOUBLE_EQ(BusFactor(Op::kBroadcast, n), 1.0) << n;
    EXPECT_DOUBLE_EQ(BusFactor(Op::kReduce, n), 1.0) << n;
    EXPECT_DOUBLE_EQ(BusFactor(Op::kSendRecv, n), 1.0) << n;
  }
  EXPECT_DOUBLE_EQ(BusFactor(Op::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(BusFactor(Op::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(BusFactor(Op::kAllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(BusFactor(Op::kBroadcast, 1), 1.0);
}

TEST(WorkloadCollective, AlgBandwidthIsBytesPerNanosecond) {
  EXPECT_DOUBLE_EQ(AlgBandwidthGbps(1000000000, 1e9), 1.0);  // 1 GB in 1 s
  EXPECT_DOUBLE_EQ(AlgBandwidthGbps(4194304, 1e6), 4.194304);
  EXPECT_EQ(AlgBandwidthGbps(4096, 0), 0.0);
}

TEST(WorkloadCollective, NamesRoundTrip) {
  for (std::string_view name : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
                                "alltoall", "sendrecv"}) {
    EXPECT_EQ(OpName(ParseOp(name).value()), name);
  }
  for (std::string_view name : {"float32", "float64", "int32", "float16", "bfloat16"}) {
    EXPECT_EQ(DTypeName(ParseDType(name).value()), name);
  }
  for (std::string_view name : {"sum", "prod", "min", "max"})
    EXPECT_EQ(RedOpName(ParseRedOp(name).value()), name);
  EXPECT_EQ(DTypeSize(DType::kFloat32), 4u);
  EXPECT_EQ(DTypeSize(DType::kFloat64), 8u);
  EXPECT_EQ(DTypeSize(DType::kInt32), 4u);
  EXPECT_EQ(DTypeSize(DType::kFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kBfloat16), 2u);
}

TEST(WorkloadCollective, WhichOpsReduceAndWhichHaveARoot) {
  EXPECT_TRUE(OpReduces(Op::kAllReduce));
  EXPECT_TRUE(OpReduces(Op::kReduceScatter));
  EXPECT_TRUE(OpReduces(Op::kReduce));
  EXPECT_FALSE(OpReduces(Op::kAllGather));
  EXPECT_FALSE(OpReduces(Op::kSendRecv));
  EXPECT_TRUE(OpHasRoot(Op::kBroadcast));
  EXPECT_TRUE(OpHasRoot(Op::kReduce));
  EXPECT_FALSE(OpHasRoot(Op::kAllReduce));
  EXPECT_EQ(RedOpLabel(Op::kAllGather, RedOp::kMax), "none");
  EXPECT_EQ(RedOpLabel(Op::kReduce, RedOp::kMax), "max");
}

TEST(WorkloadCollective, UnknownNamesListTheAcceptedOnes) {
  Result<Op> op = ParseOp("allreduce");
  ASSERT_FALSE(op.ok());
  EXPECT_EQ(op.status().message(),
            "unknown --op \"allreduce\": accepted: all_reduce, all_gather, reduce_scatter, "
            "broadcast, reduce, "
            "alltoall, sendrecv");
  Result<DType> dtype = ParseDType("float");
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.status().message(),
            "unknown --dtype \"float\": accepted: float32, float64, int32, float16, bfloat16");
  Result<RedOp> redop = ParseRedOp("avg");
  ASSERT_FALSE(redop.ok());
  EXPECT_EQ(redop.status().message(), "unknown --redop \"avg\": accepted: sum, prod, min, max");
}

// nccl-tests' buffers: the size is the larger buffer; count is per rank
// (all_gather, reduce_scatter) or per peer (alltoall).
TEST(WorkloadCollective, LayoutsAreNcclTests) {
  auto layout = [](Op op, int n) { return MakeLayout(op, DType::kFloat32, 4800, n).value(); };
  auto same = layout(Op::kAllReduce, 4);
  EXPECT_EQ(same.send_count, 1200u);
  EXPECT_EQ(same.recv_count, 1200u);
  EXPECT_EQ(same.count, 1200u);
  for (Op op : {Op::kBroadcast, Op::kReduce, Op::kSendRecv}) EXPECT_EQ(layout(op, 3).count, 1200u);
  auto gather = layout(Op::kAllGather, 4);
  EXPECT_EQ(gather.send_count, 300u);
  EXPECT_EQ(gather.recv_count, 1200u);
  EXPECT_EQ(gather.count, 300u);
  auto scatter = layout(Op::kReduceScatter, 4);
  EXPECT_EQ(scatter.send_count, 1200u);
  EXPECT_EQ(scatter.recv_count, 300u);
  EXPECT_EQ(scatter.count, 300u);
  auto a2a = layout(Op::kAllToAll, 4);
  EXPECT_EQ(a2a.send_count, 1200u);
  EXPECT_EQ(a2a.recv_count, 1200u);
  EXPECT_EQ(a2a.count, 300u);
}

TEST(WorkloadCollective, LayoutRefusesCountsTheRanksDoNotDivide) {
  for (Op op : {Op::kAllGather, Op::kReduceScatter, Op::kAllToAll}) {
    Result<Layout> l = MakeLayout(op, DType::kFloat32, 65536, 3);
    ASSERT_FALSE(l.ok()) << OpName(op);
    EXPECT_EQ(l.status().message(), "size 65536 B (-b/-e): " + std::string(OpName(op)) +
                                        " on 3 ranks needs an element count divisible by 3, not "
                                        "16384; a size that works: 65532 (a "
                                        "multiple of 12 bytes)");
    EXPECT_TRUE(MakeLayout(op, DType::kFloat32, 65532, 3).ok());
  }
  EXPECT_TRUE(MakeLayout(Op::kAllReduce, DType::kFloat32, 65536, 3).ok());
  Result<Layout> tiny = MakeLayout(Op::kAllGather, DType::kFloat16, 2, 4);
  ASSERT_FALSE(tiny.ok());
  EXPECT_NE(tiny.status().message().find("a size that works: 8 "), std::string::npos)
      << tiny.status().message();
  Result<Layout> odd = MakeLayout(Op::kAllReduce, DType::kFloat64, 12, 1);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("not a positive multiple of 8 bytes"), std::string::npos);
}

}  // namespace
}  // namespace fdrill

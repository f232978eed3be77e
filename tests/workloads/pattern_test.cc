// The data check against an independent model of every collective: each
// rank's input comes from DataPattern::Fill, the model moves and reduces
// the values as the op defines (reducing in the dtype's own arithmetic, in
// two different orders), and Check must pass the result, and count exactly
// the elements a test then breaks.
#include "workloads/pattern.h"

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "workloads/elements.h"
#include "workloads/half_float.h"

namespace fdrill {
namespace {

using Buffer = std::vector<std::byte>;

// a op b, rounded to the dtype as a backend computing in it would.
double CombineIn(DType dtype, RedOp redop, double a, double b) {
  double r = 0;
  switch (redop) {
    case RedOp::kSum:
      r = a + b;
      break;
    case RedOp::kProd:
      r = a * b;
      break;
    case RedOp::kMin:
      r = std::min(a, b);
      break;
    case RedOp::kMax:
      r = std::max(a, b);
      break;
  }
  switch (dtype) {
    case DType::kFloat32:
      return static_cast<float>(r);
    case DType::kFloat16:
      return HalfBitsToFloat(FloatToHalfBits(static_cast<float>(r)));
    case DType::kBfloat16:
      return Bfloat16BitsToFloat(FloatToBfloat16Bits(static_cast<float>(r)));
    case DType::kInt32:
      EXPECT_LE(std::abs(r), 2147483647.0) << "int32 overflow";
      return r;
    case DType::kFloat64:
      return r;
  }
  return r;
}

// The model: every rank's receive buffer after one collective.
class Model {
 public:
  Model(Op op, DType dtype, RedOp redop, int nranks, uint64_t bytes, int root = 0)
      : op_(op),
        dtype_(dtype),
        redop_(redop),
        n_(nranks),
        root_(root),
        layout_(MakeLayout(op, dtype, bytes, nranks).value()),
        pattern_(op, dtype, redop, nranks, root) {}

  // Inputs of iteration `iter` on every rank, decoded.
  std::vector<std::vector<double>> Inputs(int64_t iter) const {
    const size_t size = DTypeSize(dtype_);
    std::vector<std::vector<double>> in(static_cast<size_t>(n_));
    Buffer send(layout_.send_count * size);
    for (int r = 0; r < n_; ++r) {
      pattern_.Fill(r, iter, layout_, send);
      for (uint64_t x = 0; x < layout_.send_count; ++x)
        in[r].push_back(DecodeElement(dtype_, LoadBits(send.data(), size, x)));
    }
    return in;
  }

  // Rank r's receive buffer at iteration `iter`; `reverse` reduces from the
  // last rank.
  Buffer Result(int r, int64_t iter, bool reverse = false) const {
    const auto in = Inputs(iter);
    const size_t size = DTypeSize(dtype_);
    const uint64_t c = layout_.count;
    Buffer out(layout_.recv_count * size);
    auto fold = [&](uint64_t x) {
      double acc = in[reverse ? n_ - 1 : 0][x];
      for (int k = 1; k < n_; ++k)
        acc = CombineIn(dtype_, redop_, acc, in[reverse ? n_ - 1 - k : k][x]);
      return acc;
    };
    uint64_t inexact = 0;
    for (uint64_t y = 0; y < layout_.recv_count; ++y) {
      double v = 0;
      switch (op_) {
        case Op::kAllReduce:
          v = fold(y);
          break;
        case Op::kReduce:
          v = r == root_ ? fold(y) : 0;  // undefined off the root
          break;
        case Op::kReduceScatter:
          v = fold(static_cast<uint64_t>(r) * c + y);
          break;
        case Op::kBroadcast:
          v = in[root_][y];
          break;
        case Op::kAllGather:
          v = in[y / c][y % c];
          break;
        case Op::kAllToAll:
          v = in[y / c][static_cast<uint64_t>(r) * c + y % c];
          break;
        case Op::kSendRecv:
          v = in[(r + n_ - 1) % n_][y];
          break;
      }
      if (v != std::floor(v)) ++inexact;
      StoreBits(out.data(), size, y, EncodeValue(dtype_, v));
    }
    EXPECT_EQ(inexact, 0u)
        << "results that are not whole numbers: the check's values are not exact here";
    return out;
  }

  std::vector<Buffer> Results(int64_t iter, bool reverse = false) const {
    std::vector<Buffer> out;
    for (int r = 0; r < n_; ++r) out.push_back(Result(r, iter, reverse));
    return out;
  }

  CheckResult Check(int rank, int64_t iter, const Buffer& recv) const {
    return pattern_.Check(rank, iter, layout_, recv);
  }
  const Layout& layout() const { return layout_; }
  bool Checked(int rank) const { return op_ != Op::kReduce || rank == root_; }

 private:
  Op op_;
  DType dtype_;
  RedOp redop_;
  int n_;
  int root_;
  Layout layout_;
  DataPattern pattern_;
};

constexpr Op kOps[] = {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast,
                       Op::kReduce,    Op::kAllToAll,  Op::kSendRecv};
constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kFloat16,
                             DType::kBfloat16};
constexpr RedOp kRedOps[] = {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax};

using Combo = std::tuple<Op, DType, RedOp>;

std::string ComboName(const ::testing::TestParamInfo<Combo>& info) {
  auto [op, dtype, redop] = info.param;
  return std::string(OpName(op)) + "_" + std::string(DTypeName(dtype)) + "_" +
         std::string(RedOpName(redop));
}

class WorkloadPatternOp : public ::testing::TestWithParam<Combo> {};

// Sizes that every rank count below divides, with a few periods per rank.
uint64_t BytesFor(DType dtype, int nranks) {
  return static_cast<uint64_t>(nranks) * 150 * DTypeSize(dtype);
}

TEST_P(WorkloadPatternOp, ModelResultPassesInEveryReductionOrder) {
  auto [op, dtype, redop] = GetParam();
  for (int n : {1, 2, 3, 5, 8}) {
    Model model(op, dtype, redop, n, BytesFor(dtype, n), n - 1);
    for (int64_t iter : {int64_t{0}, int64_t{7}, int64_t{1000000007}}) {
      for (bool reverse : {false, true}) {
        std::vector<Buffer> out = model.Results(iter, reverse);
        for (int r = 0; r < n; ++r) {
          CheckResult check = model.Check(r, iter, out[r]);
          EXPECT_EQ(check.wrong, 0u) << "n " << n << " iter " << iter << " rank " << r;
          EXPECT_EQ(check.checked, model.Checked(r) ? model.layout().recv_count : 0u);
        }
      }
    }
  }
}

TEST_P(WorkloadPatternOp, EveryCorruptedElementIsCountedAndTheFirstReported) {
  auto [op, dtype, redop] = GetParam();
  const int n = 3;
  Model model(op, dtype, redop, n, BytesFor(dtype, n));
  std::vector<Buffer> out = model.Results(11);
  const size_t size = DTypeSize(dtype);
  const uint64_t last = model.layout().recv_count - 1;
  for (int r = 0; r < n; ++r) {
    if (!model.Checked(r)) continue;
    Buffer broken = out[r];
    StoreBits(broken.data(), size, 5, 0);                                           // zero
    StoreBits(broken.data(), size, last, LoadBits(broken.data(), size, last) ^ 1);  // one low bit
    StoreBits(broken.data(), size, 9,
              EncodeValue(dtype, 2 * DecodeElement(dtype, LoadBits(broken.data(), size, 9)) + 1));
    CheckResult check = model.Check(r, 11, broken);
    EXPECT_EQ(check.wrong, 3u) << "rank " << r;
    EXPECT_EQ(check.first_index, 5u);
    EXPECT_EQ(check.got, 0.0);
    EXPECT_EQ(check.expected, DecodeElement(dtype, LoadBits(out[r].data(), size, 5)));
  }
}

TEST_P(WorkloadPatternOp, LastIterationsResultFails) {
  auto [op, dtype, redop] = GetParam();
  for (int n : {1, 2, 3, 4, 8}) {
    Model model(op, dtype, redop, n, BytesFor(dtype, n));
    std::vector<Buffer> previous = model.Results(41);
    for (int r = 0; r < n; ++r) {
      if (model.Checked(r)) {
        EXPECT_GT(model.Check(r, 42, previous[r]).wrong, 0u) << "n " << n << " rank " << r;
      }
    }
  }
}

TEST_P(WorkloadPatternOp, InputDependsOnRankAndIteration) {
  auto [op, dtype, redop] = GetParam();
  const int n = 3;  // below every period, so each rank's input differs
  DataPattern pattern(op, dtype, redop, n, 0);
  auto row = [&](int rank, int64_t iter) {
    std::vector<double> v;
    for (uint64_t x = 0; x < 64; ++x) v.push_back(pattern.Input(rank, iter, x));
    return v;
  };
  for (int r = 0; r < n; ++r) {
    EXPECT_NE(row(r, 5), row(r, 6)) << "rank " << r;
    for (int s = r + 1; s < n; ++s) EXPECT_NE(row(r, 5), row(s, 5)) << r << " vs " << s;
    for (double v : row(r, 5)) EXPECT_GE(v, 1);  // 0 never expected: the corruption hook zeroes
  }
}

INSTANTIATE_TEST_SUITE_P(All, WorkloadPatternOp,
                         ::testing::Combine(::testing::ValuesIn(kOps), ::testing::ValuesIn(kDTypes),
                                            ::testing::ValuesIn(kRedOps)),
                         ComboName);

TEST(WorkloadPattern, MovementBlocksOfDifferentRanksDiffer) {
  // all_gather on 8 ranks: swapping two ranks' blocks fails every element.
  Model model(Op::kAllGather, DType::kBfloat16, RedOp::kSum, 8, 8 * 100 * 2);
  std::vector<Buffer> out = model.Results(3);
  Buffer swapped = out[0];
  const size_t block = 100 * 2;
  std::copy(out[0].begin() + 2 * block, out[0].begin() + 3 * block, swapped.begin() + 5 * block);
  std::copy(out[0].begin() + 5 * block, out[0].begin() + 6 * block, swapped.begin() + 2 * block);
  EXPECT_EQ(model.Check(0, 3, swapped).wrong, 200u);
}

// The largest and the next rank count of each exact range, as pattern.h
// derives them (2^mantissa for sums, the top exponent for products).
TEST(WorkloadPattern, ExactRankLimits) {
  EXPECT_EQ(MaxExactRanks(Op::kAllReduce, DType::kFloat32, RedOp::kSum),
            275035);  // (2^24 - 60) / 61
  EXPECT_EQ(MaxExactRanks(Op::kAllReduce, DType::kInt32, RedOp::kSum),
            35204648);  // (2^31 - 1 - 60) / 61
  EXPECT_EQ(MaxExactRanks(Op::kAllReduce, DType::kFloat16, RedOp::kSum), 156);  // (2^11 - 12) / 13
  EXPECT_EQ(MaxExactRanks(Op::kAllReduce, DType::kBfloat16, RedOp::kSum), 84);  // (2^8 - 2) / 3
  EXPECT_EQ(MaxExactRanks(Op::kAllReduce, DType::kFloat64, RedOp::kSum), 2147483647);
  EXPECT_EQ(MaxExactRanks(Op::kReduce, DType::kFloat32, RedOp::kProd), 7687);        // 126 * 61 + 1
  EXPECT_EQ(MaxExactRanks(Op::kReduce, DType::kInt32, RedOp::kProd), 1770);          // 29 * 61 + 1
  EXPECT_EQ(MaxExactRanks(Op::kReduceScatter, DType::kFloat16, RedOp::kProd), 183);  // 14 * 13 + 1
  EXPECT_EQ(MaxExactRanks(Op::kAllReduce, DType::kBfloat16, RedOp::kProd), 379);     // 126 * 3 + 1
  EXPECT_EQ(MaxExactRanks(Op::kAllReduce, DType::kFloat16, RedOp::kMin), 2147483647);
  EXPECT_EQ(MaxExactRanks(Op::kAllGather, DType::kBfloat16, RedOp::kSum), 2147483647);
}

TEST(WorkloadPattern, ExactAtTheLimitOfTheHalfTypes) {
  // The model reduces in the half type itself, in both orders: at the
  // limit every partial result is still exact.
  for (auto [dtype, redop] :
       {std::pair{DType::kFloat16, RedOp::kSum}, std::pair{DType::kBfloat16, RedOp::kSum},
        std::pair{DType::kFloat16, RedOp::kProd}}) {
    const int n = static_cast<int>(MaxExactRanks(Op::kAllReduce, dtype, redop));
    Model model(Op::kAllReduce, dtype, redop, n, 61 * DTypeSize(dtype));
    for (bool reverse : {false, true}) {
      EXPECT_EQ(model.Check(0, 1, model.Result(0, 1, reverse)).wrong, 0u)
          << DTypeName(dtype) << " " << n;
    }
  }
}

TEST(WorkloadPattern, RefusesRankCountsBeyondTheExactRange) {
  EXPECT_TRUE(CheckExactRanks(Op::kAllReduce, DType::kBfloat16, RedOp::kSum, 84).ok());
  Status s = CheckExactRanks(Op::kAllReduce, DType::kBfloat16, RedOp::kSum, 85);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--dtype bfloat16 --redop sum: the data check of all_reduce is exact "
                             "up to 84 ranks, not 85"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(CheckExactRanks(Op::kAllGather, DType::kBfloat16, RedOp::kSum, 100000).ok());
}

TEST(WorkloadPattern, ExpectedReductionVariesWithPositionForEveryRankCount) {
  // Otherwise a stale buffer could pass (the reason rank 0's inputs differ).
  // Every count up to 3 periods of the widest dtype, then a spread up to
  // the limit (the model costs n^2 per count).
  std::vector<int> counts;
  for (int n = 1; n <= 3 * 61 + 2; ++n) counts.push_back(n);
  for (int n : {244, 245, 300, 379, 380, 600, 1001, 1770}) counts.push_back(n);
  for (DType dtype : kDTypes) {
    for (RedOp redop : {RedOp::kSum, RedOp::kProd}) {
      const int64_t limit = MaxExactRanks(Op::kAllReduce, dtype, redop);
      for (int n : counts) {
        if (n > limit) break;
        Model model(Op::kAllReduce, dtype, redop, n, 61 * DTypeSize(dtype));
        Buffer out = model.Result(0, 0);
        std::set<uint64_t> values;
        for (uint64_t y = 0; y < 61; ++y) values.insert(LoadBits(out.data(), DTypeSize(dtype), y));
        EXPECT_GT(values.size(), 1u) << DTypeName(dtype) << " " << RedOpName(redop) << " n " << n;
      }
    }
  }
}

TEST(WorkloadPattern, DescribeFailure) {
  CheckResult check;
  check.checked = 1024;
  check.wrong = 1;
  check.first_index = 5;
  check.got = 9;
  check.expected = 12;
  EXPECT_EQ(DescribeFailure(1, 17, check),
            "data check FAILED: rank 1 iter 17: 1 of 1024 elements wrong, first at index 5: got 9 "
            "expected 12");
  check.got = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(DescribeFailure(1, 17, check).find("got nan expected 12"), std::string::npos);
}

}  // namespace
}  // namespace fdrill

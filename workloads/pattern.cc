#include "workloads/pattern.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "workloads/elements.h"

namespace fdrill {

namespace {

// The table in pattern.h.
struct DTypeParams {
  DType dtype;
  uint64_t period;    // P
  int move_bits;      // M = 2^move_bits
  int64_t exact_max;  // every integer up to this is exact
  int max_exponent;   // 2^k is exact for k up to this
};

constexpr std::array<DTypeParams, 5> kParams = {{
    {DType::kFloat32, 61, 24, int64_t{1} << 24, 127},
    {DType::kFloat64, 61, 24, int64_t{1} << 53, 1023},
    {DType::kInt32, 61, 24, INT32_MAX, 30},
    {DType::kFloat16, 13, 11, int64_t{1} << 11, 15},
    {DType::kBfloat16, 3, 8, int64_t{1} << 8, 127},
}};

const DTypeParams& ParamsOf(DType dtype) {
  for (const auto& p : kParams) {
    if (p.dtype == dtype) return p;
  }
  return kParams[0];
}

constexpr uint64_t kChunkElements = 4096;     // at least this many per memcpy/memcmp
constexpr uint64_t kMaxTilePeriod = 1 << 16;  // longer periods use the element loop

constexpr uint64_t kRankStride = 40503;  // odd, so rank blocks differ modulo any 2^k
constexpr int64_t kUnlimited = INT32_MAX;

// (a + b) mod m without overflow, for a, b >= 0.
uint64_t AddMod(uint64_t a, uint64_t b, uint64_t m) { return (a % m + b % m) % m; }

// Exact: every operand and result is a whole number a double holds.
double Combine(RedOp redop, double a, double b) {
  switch (redop) {
    case RedOp::kSum:
      return a + b;
    case RedOp::kProd:
      return a * b;
    case RedOp::kMin:
      return std::min(a, b);
    case RedOp::kMax:
      return std::max(a, b);
  }
  return 0;
}

// One run of the receive buffer that holds one rank's movement input,
// starting at element x0 of that rank's send buffer.
struct Block {
  uint64_t begin = 0;  // first receive index
  uint64_t length = 0;
  int source = 0;   // movement: the sending rank
  uint64_t x0 = 0;  // sender's element index of `begin`
};

}  // namespace

int64_t MaxExactRanks(Op op, DType dtype, RedOp redop) {
  if (!OpReduces(op) || redop == RedOp::kMin || redop == RedOp::kMax) return kUnlimited;
  const DTypeParams& p = ParamsOf(dtype);
  const int64_t period = static_cast<int64_t>(p.period);
  int64_t limit = redop == RedOp::kSum ? (p.exact_max - period + 1) / period
                                       : (p.max_exponent - 1) * period + 1;
  return std::min(limit, kUnlimited);
}

Status CheckExactRanks(Op op, DType dtype, RedOp redop, int nranks) {
  const int64_t limit = MaxExactRanks(op, dtype, redop);
  if (nranks <= limit) return Status::Ok();
  return InvalidArgument(
      fmt::format("--dtype {} --redop {}: the data check of {} is exact up to {} ranks, not {} "
                  "(the {} of the check's small "
                  "integers would leave the range {} holds exactly); use a wider --dtype",
                  DTypeName(dtype), RedOpName(redop), OpName(op), limit, nranks,
                  redop == RedOp::kSum ? "sum" : "product", DTypeName(dtype)));
}

DataPattern::DataPattern(Op op, DType dtype, RedOp redop, int nranks, int root)
    : op_(op),
      dtype_(dtype),
      redop_(redop),
      nranks_(std::max(nranks, 1)),
      root_(root),
      period_(ParamsOf(dtype).period),
      move_mask_((uint64_t{1} << ParamsOf(dtype).move_bits) - 1) {
  // The reduced value depends on the phase only: one table for the whole
  // run (O(nranks * P) once, not per check).
  if (OpReduces(op_)) {
    for (uint64_t t = 0; t < period_; ++t) reduced_bits_.push_back(EncodeValue(dtype_, Reduced(t)));
    reduced_tile_ = MakeTile(period_, [&](uint64_t k) { return reduced_bits_[k % period_]; });
  }
}

DataPattern::Tile DataPattern::MakeTile(uint64_t period,
                                        const std::function<uint64_t(uint64_t)>& bits_at) const {
  Tile tile;
  if (period == 0 || period > kMaxTilePeriod) return tile;
  const size_t size = DTypeSize(dtype_);
  tile.period = period;
  tile.chunk = period * ((kChunkElements + period - 1) / period);
  tile.bytes.resize((tile.chunk + period) * size);
  for (uint64_t k = 0; k < tile.chunk + period; ++k)
    StoreBits(tile.bytes.data(), size, k, bits_at(k));
  return tile;
}

double DataPattern::PhaseInput(int rank, uint64_t t, bool winner) const {
  const uint64_t shifted = AddMod(static_cast<uint64_t>(rank), t, period_);  // (r + t) mod P
  const auto p = static_cast<int64_t>(period_);
  const auto ti = static_cast<int64_t>(t);
  switch (redop_) {
    case RedOp::kSum:
      return rank == 0 ? 2 * ti + 1 : static_cast<int64_t>(shifted) + 1;
    case RedOp::kProd:
      return rank == 0 ? (t % 2 == 0 ? 2 : 1) : (shifted == 0 ? 2 : 1);
    case RedOp::kMin:
    case RedOp::kMax: {
      const int64_t min_input = winner ? ti + 1 : ti + 2 + static_cast<int64_t>(shifted);
      return redop_ == RedOp::kMin ? min_input : 2 * p + 1 - min_input;
    }
  }
  return 0;
}

double DataPattern::ReductionInput(int rank, int64_t iter, uint64_t x) const {
  const uint64_t t = AddMod(static_cast<uint64_t>(iter), x, period_);
  const uint64_t winner = AddMod(static_cast<uint64_t>(iter), x, static_cast<uint64_t>(nranks_));
  return PhaseInput(rank, t, static_cast<uint64_t>(rank) == winner);
}

double DataPattern::MovementInput(int rank, int64_t iter, uint64_t x) const {
  // Unsigned wrap-around is harmless: 2^64 is a multiple of M.
  return static_cast<double>(
      1 +
      ((static_cast<uint64_t>(rank) * kRankStride + static_cast<uint64_t>(iter) + x) & move_mask_));
}

double DataPattern::Input(int rank, int64_t iter, uint64_t x) const {
  return OpReduces(op_) ? ReductionInput(rank, iter, x) : MovementInput(rank, iter, x);
}

double DataPattern::Reduced(uint64_t t) const {
  const auto p = static_cast<int64_t>(period_);
  const auto ti = static_cast<int64_t>(t);
  if (redop_ == RedOp::kMin) return ti + 1;
  if (redop_ == RedOp::kMax) return 2 * p - ti;
  // Sum and product inputs depend on the phase only.
  double acc = PhaseInput(0, t, false);
  for (int r = 1; r < nranks_; ++r) acc = Combine(redop_, acc, PhaseInput(r, t, false));
  return acc;
}

void DataPattern::Fill(int rank, int64_t iter, const Layout& layout,
                       std::span<std::byte> send) const {
  const size_t size = DTypeSize(dtype_);
  const uint64_t count = std::min<uint64_t>(layout.send_count, send.size() / size);
  if (!OpReduces(op_)) {
    for (uint64_t x = 0; x < count; ++x)
      StoreBits(send.data(), size, x, EncodeValue(dtype_, MovementInput(rank, iter, x)));
    return;
  }
  // The input depends on x through the phase t = (i + x) mod P and, for
  // min/max, whether this rank is the winner (i + x) mod n: tables of P
  // encoded values, walked with running counters.
  const bool rotating = redop_ == RedOp::kMin || redop_ == RedOp::kMax;
  std::vector<uint64_t> other(period_), winner(period_);
  for (uint64_t t = 0; t < period_; ++t) {
    other[t] = EncodeValue(dtype_, PhaseInput(rank, t, false));
    winner[t] = EncodeValue(dtype_, PhaseInput(rank, t, true));
  }
  const uint64_t w_rank = static_cast<uint64_t>(rank);
  const auto n = static_cast<uint64_t>(nranks_);
  // Element x is at phase k = (iter + x) mod period of one sequence: P for
  // sum and product, lcm(P, n) when the min/max winner rotates too.
  if (fill_rank_ != rank) {
    const uint64_t period = rotating ? std::lcm(period_, n) : period_;
    fill_tile_ = MakeTile(period, [&](uint64_t k) {
      return rotating && k % n == w_rank ? winner[k % period_] : other[k % period_];
    });
    fill_rank_ = rank;
  }
  if (fill_tile_.period != 0) {
    const std::byte* src =
        fill_tile_.bytes.data() + (static_cast<uint64_t>(iter) % fill_tile_.period) * size;
    for (uint64_t done = 0; done < count; done += fill_tile_.chunk) {
      std::memcpy(send.data() + done * size, src, std::min(fill_tile_.chunk, count - done) * size);
    }
    return;
  }
  uint64_t t = AddMod(static_cast<uint64_t>(iter), 0, period_);
  uint64_t w = AddMod(static_cast<uint64_t>(iter), 0, static_cast<uint64_t>(nranks_));
  for (uint64_t x = 0; x < count; ++x) {
    StoreBits(send.data(), size, x, rotating && w == w_rank ? winner[t] : other[t]);
    if (++t == period_) t = 0;
    if (++w == static_cast<uint64_t>(nranks_)) w = 0;
  }
}

CheckResult DataPattern::Check(int rank, int64_t iter, const Layout& layout,
                               std::span<const std::byte> recv) const {
  const size_t size = DTypeSize(dtype_);
  const uint64_t count = std::min<uint64_t>(layout.recv_count, recv.size() / size);
  const uint64_t c = layout.count;
  const int n = nranks_;
  CheckResult result;
  auto mismatch = [&](uint64_t y, uint64_t got, uint64_t expected) {
    if (result.wrong == 0) {
      result.first_index = y;
      result.got = DecodeElement(dtype_, got);
      result.expected = DecodeElement(dtype_, expected);
    }
    ++result.wrong;
  };

  if (OpReduces(op_)) {
    if (op_ == Op::kReduce && rank != root_) return result;  // no result defined here
    const std::vector<uint64_t>& table = reduced_bits_;
    const uint64_t x0 = op_ == Op::kReduceScatter ? static_cast<uint64_t>(rank) * c : 0;
    uint64_t t = AddMod(static_cast<uint64_t>(iter), x0, period_);
    if (const Tile& tile = reduced_tile_; tile.period != 0) {
      // Chunks equal to the expected sequence pass with one memcmp; a chunk
      // that differs is walked element by element to count and locate.
      const std::byte* want = tile.bytes.data() + t * size;
      for (uint64_t done = 0; done < count; done += tile.chunk) {
        const uint64_t len = std::min(tile.chunk, count - done);
        if (std::memcmp(recv.data() + done * size, want, len * size) == 0) continue;
        for (uint64_t y = done; y < done + len; ++y) {
          const uint64_t got = LoadBits(recv.data(), size, y);
          const uint64_t expected = LoadBits(want, size, y - done);
          if (got != expected) mismatch(y, got, expected);
        }
      }
      result.checked = count;
      return result;
    }
    for (uint64_t y = 0; y < count; ++y) {
      const uint64_t got = LoadBits(recv.data(), size, y);
      if (got != table[t]) mismatch(y, got, table[t]);
      if (++t == period_) t = 0;
    }
    result.checked = count;
    return result;
  }

  std::vector<Block> blocks;
  switch (op_) {
    case Op::kBroadcast:
      blocks.push_back({0, count, root_, 0});
      break;
    case Op::kSendRecv:
      blocks.push_back({0, count, (rank + n - 1) % n, 0});
      break;
    case Op::kAllGather:
    case Op::kAllToAll:
      for (int s = 0; s < n; ++s) {
        const uint64_t x0 = op_ == Op::kAllToAll ? static_cast<uint64_t>(rank) * c : 0;
        blocks.push_back({static_cast<uint64_t>(s) * c, c, s, x0});
      }
      break;
    default:
      break;
  }
  for (const Block& b : blocks) {
    const uint64_t end = std::min(count, b.begin + b.length);
    for (uint64_t y = b.begin; y < end; ++y) {
      const uint64_t got = LoadBits(recv.data(), size, y);
      const uint64_t expected =
          EncodeValue(dtype_, MovementInput(b.source, iter, b.x0 + (y - b.begin)));
      if (got != expected) mismatch(y, got, expected);
    }
  }
  result.checked = count;
  return result;
}

std::string DescribeFailure(int rank, int64_t iter, const CheckResult& check) {
  return fmt::format(
      "data check FAILED: rank {} iter {}: {} of {} elements wrong, first at index {}: got {} "
      "expected {}",
      rank, iter, check.wrong, check.checked, check.first_index, check.got, check.expected);
}

}  // namespace fdrill

// The data check of fdrill-collective: what each rank sends at each
// iteration, and what each rank must get back, for every op, dtype and
// reduction, so a wrong, stale, misplaced or corrupted result is caught on
// the iteration it happens. Pure; a DataPattern is immutable and
// thread-safe.
//
// Every value is a positive integer that the dtype holds exactly, and so is
// every partial result of the reduction in whatever order a backend
// combines values, so the result is bit-exact and the check is equality
// (after encoding the expected integer in the dtype), not a tolerance.
// Below, i is the iteration and x the element index in the sender's send
// buffer; P is the dtype's period and M its movement modulus:
//
//   dtype     P   M      exact integers up to
//   float32   61  2^24   2^24
//   float64   61  2^24   2^53
//   int32     61  2^24   2^31 - 1
//   float16   13  2^11   2^11
//   bfloat16   3  2^8    2^8
//
// Reductions (all_reduce, reduce, reduce_scatter), with t = (i + x) mod P:
//   sum:  rank 0 sends 2t + 1, rank r > 0 sends ((r + t) mod P) + 1;
//         the sum is at most nP + P - 1, exact while that is within range.
//         Rank 0's different term keeps the sum varying with t for every
//         rank count (P consecutive other ranks add up to a constant), so a
//         buffer left from the previous iteration fails.
//   prod: rank 0 sends 2 when t is even, else 1; rank r > 0 sends 2 when
//         (r + t) mod P = 0, else 1. The product is 2^k with
//         k <= 1 + ceil((n - 1) / P), exact while 2^k is (float16: k <= 15,
//         int32: k <= 30, float32/bfloat16: 127, float64: 1023).
//   min:  with w = (i + x) mod n and b = t + 1, rank w sends b and every
//         other rank b + 1 + ((r + t) mod P): the minimum is b, and which
//         rank supplies it rotates over all ranks. No arithmetic, no bound.
//   max:  2P + 1 minus the min input: the maximum is 2P - t.
// Movement (all_gather, broadcast, alltoall, sendrecv): rank r sends
//   1 + ((r * 40503 + i + x) mod M), so two blocks differ unless their
//   ranks are equal modulo M (every rank below M differs from every other),
//   and last iteration's data is this iteration's shifted by one element.
// Which element each rank receives is the op's definition (pattern.cc).
// reduce defines no result on ranks other than the root: nothing is
// checked there.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/core/result.h"
#include "workloads/collective.h"

namespace fdrill {

// The largest rank count for which the expected result of op/dtype/redop is
// exact (a huge number where nothing limits it; see the table above).
int64_t MaxExactRanks(Op op, DType dtype, RedOp redop);

// InvalidArgument, naming --dtype and --redop and the limit, when nranks is
// beyond MaxExactRanks.
Status CheckExactRanks(Op op, DType dtype, RedOp redop, int nranks);

struct CheckResult {
  uint64_t checked = 0;      // elements compared (0: reduce on a non-root)
  uint64_t wrong = 0;        // elements that differ from the expected value
  uint64_t first_index = 0;  // valid when wrong > 0
  double got = 0;
  double expected = 0;
};

class DataPattern {
 public:
  // `root` matters only for broadcast and reduce. O(nranks * P).
  DataPattern(Op op, DType dtype, RedOp redop, int nranks, int root);

  // The whole number rank `rank` sends as element x at iteration `iter`
  // (a double: the products reach 2^1023, beyond any integer type).
  double Input(int rank, int64_t iter, uint64_t x) const;

  // Writes Input(rank, iter, x) for x < layout.send_count, encoded in the
  // dtype, into `send` (send_count elements).
  void Fill(int rank, int64_t iter, const Layout& layout, std::span<std::byte> send) const;

  // Compares `recv` (recv_count elements), element by element, with what
  // the op defines from every rank's Input(). O(recv_count).
  CheckResult Check(int rank, int64_t iter, const Layout& layout,
                    std::span<const std::byte> recv) const;

 private:
  // The reduction over all ranks of the reduction inputs at phase t.
  double Reduced(uint64_t t) const;
  // The reduction input of `rank` at phase t (pattern.h); `winner` (rank
  // supplies the min/max here) matters only for min and max.
  double PhaseInput(int rank, uint64_t t, bool winner) const;
  double ReductionInput(int rank, int64_t iter, uint64_t x) const;
  double MovementInput(int rank, int64_t iter, uint64_t x) const;

  // Periodic sequences written and compared with memcpy/memcmp a chunk at a
  // time (the per-element loop costs the collective it runs beside: on
  // oversubscribed cores every cycle of a check is a peer's cycle).
  struct Tile {
    uint64_t period = 0;           // elements; 0: no tile, use the element loop
    uint64_t chunk = 0;            // a multiple of period
    std::vector<std::byte> bytes;  // chunk + period encoded elements from phase 0
  };
  Tile MakeTile(uint64_t period, const std::function<uint64_t(uint64_t)>& bits_at) const;

  Op op_;
  DType dtype_;
  RedOp redop_;
  int nranks_;
  int root_;
  uint64_t period_;
  uint64_t move_mask_;
  Tile reduced_tile_;           // Reduced(t), period P
  mutable int fill_rank_ = -1;  // the rank fill_tile_ was built for
  mutable Tile fill_tile_;
  std::vector<uint64_t> reduced_bits_;  // reducing ops: the result at each phase, encoded
};

// "data check FAILED: rank 1 iter 17: 1 of 1048576 elements wrong, first at
// index 5: got 9 expected 12"
std::string DescribeFailure(int rank, int64_t iter, const CheckResult& check);

}  // namespace fdrill

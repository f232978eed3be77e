// The collective vocabulary: which ops, element types and reduction ops
// fdrill-collective knows, their names as written in flags and metrics, each
// op's bus factor, and how a message size becomes buffer lengths (Layout).
// One table per kind, in collective.cc; a new op or dtype is one row there
// plus its mapping in each backend adapter and its rule in pattern.cc.
// Pure and thread-safe; nothing here touches MPI, CUDA or the machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/core/result.h"

namespace fdrill {

enum class Op { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };
enum class DType { kFloat32, kFloat64, kInt32, kFloat16, kBfloat16 };
enum class RedOp { kSum, kProd, kMin, kMax };

// Names as they appear in --op/--dtype/--redop and in the metrics record.
std::string_view OpName(Op op);
std::string_view DTypeName(DType dtype);
std::string_view RedOpName(RedOp redop);
// RedOpName, or "none" for an op that does not reduce (nccl-tests' column).
std::string_view RedOpLabel(Op op, RedOp redop);

// Errors name the flag and the accepted spellings, e.g.
//   unknown --op "allgather": accepted: all_reduce, all_gather, ...
Result<Op> ParseOp(std::string_view name);
Result<DType> ParseDType(std::string_view name);
Result<RedOp> ParseRedOp(std::string_view name);

// Bytes per element.
size_t DTypeSize(DType dtype);

// Whether the op combines values (takes a RedOp) / has a root rank.
bool OpReduces(Op op);
bool OpHasRoot(Op op);

// busbw = algbw * BusFactor(op, nranks): nccl-tests' definition, so numbers
// compare with theirs (the table in collective.cc). 0 for one rank, where
// nothing crosses a bus.
double BusFactor(Op op, int nranks);

// algbw in GB/s (10^9 bytes per second, as nccl-tests): bytes / time.
// 0 when time_ns is not positive.
double AlgBandwidthGbps(uint64_t bytes, double time_ns);

// The buffers of one message size on one rank, as nccl-tests lays them out.
// The size (-b/-e, the `bytes` of a record) is the larger of the two
// buffers, so it is the whole gathered or scattered vector:
//   all_reduce, broadcast, reduce, sendrecv: send = recv = count
//   all_gather:      send = count, recv = nranks * count
//   reduce_scatter:  send = nranks * count, recv = count
//   alltoall:        send = recv = nranks * count (count per peer)
// `count` is the op's count argument, nccl-tests' "count" column.
struct Layout {
  uint64_t send_count = 0;  // elements
  uint64_t recv_count = 0;
  uint64_t count = 0;
};

// Fails, naming the size and a size that would work, when size_bytes is
// not a positive whole number of elements or, for all_gather,
// reduce_scatter and alltoall, the element count is not a multiple of
// nranks (nccl-tests rounds down silently; we refuse instead, so the bytes
// a record claims are the bytes moved).
Result<Layout> MakeLayout(Op op, DType dtype, uint64_t size_bytes, int nranks);

// "all_reduce, all_gather, ..." for help text and errors.
std::string AcceptedOps();
std::string AcceptedDTypes();
std::string AcceptedRedOps();

}  // namespace fdrill

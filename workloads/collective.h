// The collective vocabulary: which ops, element types and reduction ops
// fdrill-collective knows, their names as written in flags and metrics, and
// each op's bus factor. One table per kind, in collective.cc; a new op or
// dtype is one row there plus its mapping in each backend adapter.
// Pure and thread-safe; nothing here touches MPI, CUDA or the machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "harness/core/result.h"

namespace fdrill {

enum class Op { kAllReduce };
enum class DType { kFloat32 };
enum class RedOp { kSum };

// Names as they appear in --op/--dtype and in the metrics record.
std::string_view OpName(Op op);
std::string_view DTypeName(DType dtype);
std::string_view RedOpName(RedOp redop);

// Errors name the accepted spellings, e.g.
//   unknown --op "all_gather": accepted: all_reduce
Result<Op> ParseOp(std::string_view name);
Result<DType> ParseDType(std::string_view name);

// Bytes per element.
size_t DTypeSize(DType dtype);

// busbw = algbw * BusFactor(op, nranks): nccl-tests' definition, so numbers
// compare with theirs (see the table in collective.cc). 0 for one rank.
double BusFactor(Op op, int nranks);

// algbw in GB/s (10^9 bytes per second, as nccl-tests): bytes / time.
// 0 when time_ns is not positive.
double AlgBandwidthGbps(uint64_t bytes, double time_ns);

// "all_reduce, ..." for help text and errors.
std::string AcceptedOps();
std::string AcceptedDTypes();

}  // namespace fdrill

#include "workloads/collective.h"

#include <array>

namespace fdrill {

namespace {

// Bus factors from nccl-tests (doc/PERFORMANCE.md there): the factor turns
// algbw (size / time) into the bandwidth each link carries in an optimal
// ring, so it compares across rank counts and with the hardware peak.
//   all_reduce                          2(n-1)/n  (reduce-scatter, then all-gather)
//   all_gather, reduce_scatter, alltoall (n-1)/n  (each rank misses 1/n locally)
//   broadcast, reduce, sendrecv          1        (every byte crosses one link)
// The (n-1) factors are 0 on one rank, as in nccl-tests.
double TwiceRingFactor(int n) { return n <= 0 ? 0.0 : 2.0 * (n - 1) / n; }
double RingFactor(int n) { return n <= 0 ? 0.0 : static_cast<double>(n - 1) / n; }
double UnitFactor(int) { return 1.0; }

// How a size splits into buffers (see Layout in collective.h).
enum class Shape { kSame, kGather, kScatter, kAllToAll };

struct OpRow {
  Op op;
  std::string_view name;
  double (*bus_factor)(int nranks);
  Shape shape;
  bool reduces;
  bool has_root;
};

constexpr std::array<OpRow, 7> kOps = {{
    {Op::kAllReduce, "all_reduce", TwiceRingFactor, Shape::kSame, true, false},
    {Op::kAllGather, "all_gather", RingFactor, Shape::kGather, false, false},
    {Op::kReduceScatter, "reduce_scatter", RingFactor, Shape::kScatter, true, false},
    {Op::kBroadcast, "broadcast", UnitFactor, Shape::kSame, false, true},
    {Op::kReduce, "reduce", UnitFactor, Shape::kSame, true, true},
    {Op::kAllToAll, "alltoall", RingFactor, Shape::kAllToAll, false, false},
    {Op::kSendRecv, "sendrecv", UnitFactor, Shape::kSame, false, false},
}};

struct DTypeRow {
  DType dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeRow, 5> kDTypes = {{
    {DType::kFloat32, "float32", 4},
    {DType::kFloat64, "float64", 8},
    {DType::kInt32, "int32", 4},
    {DType::kFloat16, "float16", 2},
    {DType::kBfloat16, "bfloat16", 2},
}};

struct RedOpRow {
  RedOp redop;
  std::string_view name;
};

constexpr std::array<RedOpRow, 4> kRedOps = {{
    {RedOp::kSum, "sum"},
    {RedOp::kProd, "prod"},
    {RedOp::kMin, "min"},
    {RedOp::kMax, "max"},
}};

template <typename Rows>
std::string JoinNames(const Rows& rows) {
  std::string out;
  for (const auto& row : rows) {
    if (!out.empty()) out += ", ";
    out += row.name;
  }
  return out;
}

const OpRow* Find(Op op) {
  for (const auto& row : kOps) {
    if (row.op == op) return &row;
  }
  return nullptr;
}

}  // namespace

std::string_view OpName(Op op) {
  const OpRow* row = Find(op);
  return row != nullptr ? row->name : "unknown";
}

std::string_view DTypeName(DType dtype) {
  for (const auto& row : kDTypes) {
    if (row.dtype == dtype) return row.name;
  }
  return "unknown";
}

std::string_view RedOpName(RedOp redop) {
  for (const auto& row : kRedOps) {
    if (row.redop == redop) return row.name;
  }
  return "unknown";
}

std::string_view RedOpLabel(Op op, RedOp redop) {
  return OpReduces(op) ? RedOpName(redop) : "none";
}

Result<Op> ParseOp(std::string_view name) {
  for (const auto& row : kOps) {
    if (row.name == name) return row.op;
  }
  return InvalidArgument("unknown --op \"" + std::string(name) + "\": accepted: " + AcceptedOps());
}

Result<DType> ParseDType(std::string_view name) {
  for (const auto& row : kDTypes) {
    if (row.name == name) return row.dtype;
  }
  return InvalidArgument("unknown --dtype \"" + std::string(name) +
                         "\": accepted: " + AcceptedDTypes());
}

Result<RedOp> ParseRedOp(std::string_view name) {
  for (const auto& row : kRedOps) {
    if (row.name == name) return row.redop;
  }
  return InvalidArgument("unknown --redop \"" + std::string(name) +
                         "\": accepted: " + AcceptedRedOps());
}

size_t DTypeSize(DType dtype) {
  for (const auto& row : kDTypes) {
    if (row.dtype == dtype) return row.size;
  }
  return 0;
}

bool OpReduces(Op op) {
  const OpRow* row = Find(op);
  return row != nullptr && row->reduces;
}

bool OpHasRoot(Op op) {
  const OpRow* row = Find(op);
  return row != nullptr && row->has_root;
}

double BusFactor(Op op, int nranks) {
  const OpRow* row = Find(op);
  return row != nullptr ? row->bus_factor(nranks) : 0.0;
}

double AlgBandwidthGbps(uint64_t bytes, double time_ns) {
  // bytes / ns is bytes per 1e-9 s, i.e. exactly GB/s.
  return time_ns > 0 ? static_cast<double>(bytes) / time_ns : 0.0;
}

Result<Layout> MakeLayout(Op op, DType dtype, uint64_t size_bytes, int nranks) {
  const OpRow* row = Find(op);
  const uint64_t element = DTypeSize(dtype);
  if (row == nullptr || element == 0 || nranks < 1)
    return Internal("MakeLayout: unknown op, dtype or rank count");
  if (size_bytes == 0 || size_bytes % element != 0) {
    return InvalidArgument("size " + std::to_string(size_bytes) +
                           " B (-b/-e) is not a positive multiple of " + std::to_string(element) +
                           " bytes (one " + std::string(DTypeName(dtype)) + " element)");
  }
  const uint64_t elements = size_bytes / element;
  const uint64_t n = static_cast<uint64_t>(nranks);
  if (row->shape != Shape::kSame && elements % n != 0) {
    const uint64_t unit = n * element;
    const uint64_t suggestion = size_bytes / unit == 0 ? unit : size_bytes / unit * unit;
    return InvalidArgument("size " + std::to_string(size_bytes) +
                           " B (-b/-e): " + std::string(row->name) + " on " +
                           std::to_string(nranks) + " ranks needs an element count divisible by " +
                           std::to_string(nranks) + ", not " + std::to_string(elements) +
                           "; a size that works: " + std::to_string(suggestion) +
                           " (a multiple of " + std::to_string(unit) + " bytes)");
  }
  Layout layout;
  switch (row->shape) {
    case Shape::kSame:
      layout = {elements, elements, elements};
      break;
    case Shape::kGather:
      layout = {elements / n, elements, elements / n};
      break;
    case Shape::kScatter:
      layout = {elements, elements / n, elements / n};
      break;
    case Shape::kAllToAll:
      layout = {elements, elements, elements / n};
      break;
  }
  return layout;
}

std::string AcceptedOps() { return JoinNames(kOps); }
std::string AcceptedDTypes() { return JoinNames(kDTypes); }
std::string AcceptedRedOps() { return JoinNames(kRedOps); }

}  // namespace fdrill

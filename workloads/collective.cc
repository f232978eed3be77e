#include "workloads/collective.h"

#include <array>

namespace fdrill {

namespace {

// Bus factors from nccl-tests (doc/PERFORMANCE.md there): the factor turns
// algbw (bytes / time) into the bandwidth each link carries in an optimal
// ring, so it is comparable across rank counts and with the hardware peak.
//   all_reduce      2(n-1)/n   (reduce-scatter then all-gather)
// For later rows: all_gather and reduce_scatter (n-1)/n, alltoall (n-1)/n,
// broadcast and reduce 1, sendrecv 1.
struct OpRow {
  Op op;
  std::string_view name;
  double (*bus_factor)(int nranks);
};

constexpr std::array<OpRow, 1> kOps = {{
    {Op::kAllReduce, "all_reduce", [](int n) { return n <= 0 ? 0.0 : 2.0 * (n - 1) / n; }},
}};

struct DTypeRow {
  DType dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeRow, 1> kDTypes = {{
    {DType::kFloat32, "float32", 4},
}};

struct RedOpRow {
  RedOp redop;
  std::string_view name;
};

constexpr std::array<RedOpRow, 1> kRedOps = {{
    {RedOp::kSum, "sum"},
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

}  // namespace

std::string_view OpName(Op op) {
  for (const auto& row : kOps) {
    if (row.op == op) return row.name;
  }
  return "unknown";
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
  return InvalidArgument("unknown --dtype \"" + std::string(name) + "\": accepted: " + AcceptedDTypes());
}

size_t DTypeSize(DType dtype) {
  for (const auto& row : kDTypes) {
    if (row.dtype == dtype) return row.size;
  }
  return 0;
}

double BusFactor(Op op, int nranks) {
  for (const auto& row : kOps) {
    if (row.op == op) return row.bus_factor(nranks);
  }
  return 0.0;
}

double AlgBandwidthGbps(uint64_t bytes, double time_ns) {
  // bytes / ns is bytes per 1e-9 s, i.e. exactly GB/s.
  return time_ns > 0 ? static_cast<double>(bytes) / time_ns : 0.0;
}

std::string AcceptedOps() { return JoinNames(kOps); }
std::string AcceptedDTypes() { return JoinNames(kDTypes); }

}  // namespace fdrill

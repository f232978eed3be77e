#include "workloads/plan.h"

#include <algorithm>
#include <string>

#include "workloads/pattern.h"

namespace fdrill {

Result<std::vector<SizeStep>> PlanSizes(const Config& config, int nranks) {
  if (nranks < 1) return Internal("PlanSizes: no ranks");
  if (OpHasRoot(config.op) && (config.root < 0 || config.root >= nranks)) {
    return InvalidArgument("--root " + std::to_string(config.root) +
                           " is not a rank: this run has " + std::to_string(nranks) +
                           " ranks (0.." + std::to_string(nranks - 1) + ")");
  }
  if (Status s = CheckExactRanks(config.op, config.dtype, config.redop, nranks); !s.ok()) return s;
  std::vector<SizeStep> plan;
  for (uint64_t bytes : config.sizes) {
    Result<Layout> layout = MakeLayout(config.op, config.dtype, bytes, nranks);
    if (!layout.ok()) return layout.status();
    plan.push_back({bytes, *layout});
  }
  if (plan.empty()) return InvalidArgument("no message size: give -b/--size");
  return plan;
}

uint64_t MaxSendBytes(const std::vector<SizeStep>& plan, DType dtype) {
  uint64_t most = 0;
  for (const SizeStep& s : plan) most = std::max(most, s.layout.send_count);
  return most * DTypeSize(dtype);
}

uint64_t MaxRecvBytes(const std::vector<SizeStep>& plan, DType dtype) {
  uint64_t most = 0;
  for (const SizeStep& s : plan) most = std::max(most, s.layout.recv_count);
  return most * DTypeSize(dtype);
}

}  // namespace fdrill

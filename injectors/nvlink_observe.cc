// ObserveNvLinks: per-link NVLink state and DL error counters, read through
// NVML for the agent's before/after snapshots. Reads only: the counters are
// never reset here (nvmlDeviceResetNvLinkErrorCounters would erase what
// another observer is diffing); callers diff two samples.
//
// NVML numbers links 0..NVML_NVLINK_MAX_LINKS-1 whatever the GPU has; a link
// the GPU lacks answers nvmlDeviceGetNvLinkState with NOT_SUPPORTED or
// INVALID_ARGUMENT, so those are skipped rather than reported. A counter a
// link does not implement (ECC_DATA before NVLink 3, for one) is left out.
#include "injectors/nvml.h"

namespace fdrill {

namespace {
struct CounterName {
  nvmlNvLinkErrorCounter_t id;
  const char* name;
};
constexpr CounterName kCounters[] = {
    {NVML_NVLINK_ERROR_DL_REPLAY, "dl_replay"},     {NVML_NVLINK_ERROR_DL_RECOVERY, "dl_recovery"},
    {NVML_NVLINK_ERROR_DL_CRC_FLIT, "dl_crc_flit"}, {NVML_NVLINK_ERROR_DL_CRC_DATA, "dl_crc_data"},
    {NVML_NVLINK_ERROR_DL_ECC_DATA, "dl_ecc_data"},
};

bool Absent(const Status& s) {
  return s.code() == StatusCode::kUnsupported || s.code() == StatusCode::kInvalidArgument;
}
}  // namespace

Result<std::vector<NvLinkSample>> ObserveNvLinks(Gpus& nvml, unsigned gpu) {
  if (auto s = nvml.CheckGpu(gpu); !s.ok()) return s;
  std::vector<NvLinkSample> out;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    auto active = nvml.NvLinkActive(gpu, link);
    if (!active.ok()) {
      if (Absent(active.status())) continue;
      return active.status().Annotate("GPU " + std::to_string(gpu) + " NVLink " +
                                      std::to_string(link));
    }
    NvLinkSample sample{link, *active, {}};
    for (const auto& c : kCounters) {
      auto n = nvml.NvLinkErrorCounter(gpu, link, c.id);
      if (n.ok()) {
        sample.errors.emplace_back(c.name, *n);
      } else if (!Absent(n.status())) {
        return n.status().Annotate("GPU " + std::to_string(gpu) + " NVLink " +
                                   std::to_string(link));
      }
    }
    out.push_back(std::move(sample));
  }
  return out;
}

Json NvLinkSamplesJson(const std::vector<NvLinkSample>& links) {
  Json out = Json::array();
  for (const auto& l : links) {
    Json errors = Json::object();
    for (const auto& [name, n] : l.errors) errors[name] = n;
    out.push_back({{"link", l.link}, {"active", l.active}, {"errors", errors}});
  }
  return out;
}

}  // namespace fdrill

#include "common/host/processes.h"

#include <cstdlib>

namespace fdrill {

Status SignalIfSame(ProcessTable& table, int pid, uint64_t start_ticks, int sig) {
  auto info = table.Inspect(pid);
  if (!info.ok())
    return info.status().code() == StatusCode::kNotFound ? Status::Ok() : info.status();
  if (info->start_ticks != start_ticks) return Status::Ok();  // the pid names another process now
  Status s = table.Signal(pid, sig);
  return s.code() == StatusCode::kNotFound ? Status::Ok() : s;
}

int RankOf(const ProcInfo& info) {
  for (const char* key : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "FDRILL_RANK"}) {
    auto it = info.env.find(key);
    if (it == info.env.end() || it->second.empty()) continue;
    char* end = nullptr;
    long rank = std::strtol(it->second.c_str(), &end, 10);
    if (*end == '\0' && rank >= 0) return static_cast<int>(rank);
  }
  return -1;
}

}  // namespace fdrill

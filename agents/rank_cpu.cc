#include "agents/rank_cpu.h"

#include <unistd.h>

#include <optional>
#include <string>

namespace fdrill {

void RankCpu::Sample(Json& out) {
  const bool eager = eager_ > 0 && ranks_.empty();
  if (eager_ > 0) --eager_;
  const bool due = since_scan_ < 0 || ++since_scan_ >= kRescanEvery || eager;
  if (due || !Refresh()) Scan();
  static const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  for (const RankProc& r : ranks_) {
    if (r.rank < 0) continue;
    out["rank/" + std::to_string(r.rank) + ".cpu_seconds"] =
        static_cast<double>(r.cpu_ticks) / ticks_per_second;
  }
}

bool RankCpu::Refresh() {
  for (RankProc& r : ranks_) {
    auto stat = procs_.Stat(r.pid);
    if (!stat.ok() || stat->start_ticks != r.start_ticks || stat->state == 'Z' ||
        stat->state == 'X') {
      return false;
    }
    r.cpu_ticks = stat->cpu_ticks;
  }
  return true;
}

void RankCpu::Scan() {
  auto found = FindRanks(procs_, std::nullopt);  // NotFound: none runs here
  ranks_ = found.ok() ? std::move(*found) : std::vector<RankProc>{};
  since_scan_ = 0;
  if (!ranks_.empty()) eager_ = 0;
}

}  // namespace fdrill

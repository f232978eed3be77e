// cpu_hog: N threads that spin on the node's CPUs while applied — host CPU
// contention for the ranks and their progress threads (reference §1.13).
// Runs fdrill-burn (burn_process.h: dies with the agent, own cgroup).
// Verify observes the process running (and in its cgroup).
#include "injectors/burn_process.h"
#include "injectors/params.h"

namespace fdrill {

Result<std::unique_ptr<Fault>> MakeCpuHog(const Json& params, Host host) {
  ParamReader p(params);
  auto threads = p.Int("threads", 1, 1, 1024);
  if (!threads.ok()) return threads.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  BurnSpec spec{"cpu_hog", "cpu", {"cpu", std::to_string(*threads)}, std::chrono::seconds(1)};
  return std::unique_ptr<Fault>(std::make_unique<BurnFault>(host, std::move(spec)));
}

}  // namespace fdrill
